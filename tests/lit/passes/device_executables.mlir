// aotc-split-executables-per-backend moves the variants of every backend but the first
// into an executable of their own and points the dispatches at it; an executable of one
// backend (the two CPU variants, or a CPU-only executable) stays whole. Running it twice
// changes nothing more.
// aotc-partial-executables turns IREE's "no variant of this executable" load failure into
// one that fails only when the device supports none of the module's executable formats.

// RUN: %aotc-opt %s --split-input-file --pass-pipeline='aotc-split-executables-per-backend' | filecheck %s --check-prefix=SPLIT
// RUN: %aotc-opt %s --split-input-file --pass-pipeline='aotc-split-executables-per-backend,aotc-split-executables-per-backend' | filecheck %s --check-prefix=SPLIT
// RUN: %aotc-opt %s --split-input-file --pass-pipeline='aotc-partial-executables' | filecheck %s --check-prefix=PARTIAL
// RUN: %aotc-opt %s --split-input-file --pass-pipeline='aotc-partial-executables,aotc-partial-executables' | filecheck %s --check-prefix=PARTIAL

// SPLIT-LABEL: hal.executable private @mixed {
// SPLIT:         hal.executable.variant public @x86
// SPLIT:         hal.executable.variant public @arm
// SPLIT-NOT:     hal.executable.variant
// SPLIT:       hal.executable private @cpu_only {
// SPLIT:         hal.executable.variant public @x86
// SPLIT-NOT:     hal.executable.variant
// SPLIT:       util.func public @f
// SPLIT:         stream.cmd.dispatch {@mixed::@x86::@add, @mixed::@arm::@add, @mixed_vulkan_spirv::@spirv::@add, @mixed_cuda::@ptx::@add}
// SPLIT:         stream.cmd.dispatch @cpu_only::@x86::@mul
// SPLIT:       hal.executable private @mixed_vulkan_spirv {
// SPLIT-NEXT:    hal.executable.variant public @spirv
// SPLIT-NOT:     hal.executable.variant
// SPLIT:       hal.executable private @mixed_cuda {
// SPLIT-NEXT:    hal.executable.variant public @ptx
// SPLIT-NOT:     hal.executable.variant
// SPLIT-NOT:   hal.executable private
#cpu = #hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">
#arm = #hal.executable.target<"llvm-cpu", "embedded-elf-arm_64">
#spirv = #hal.executable.target<"vulkan-spirv", "vulkan-spirv-fb">
#ptx = #hal.executable.target<"cuda", "cuda-nvptx-fb">
#layout = #hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
module {
  hal.executable private @mixed {
    hal.executable.variant public @x86 target(#cpu) {
      hal.executable.export public @add ordinal(0) layout(#layout)
      builtin.module {}
    }
    hal.executable.variant public @arm target(#arm) {
      hal.executable.export public @add ordinal(0) layout(#layout)
      builtin.module {}
    }
    hal.executable.variant public @spirv target(#spirv) {
      hal.executable.export public @add ordinal(0) layout(#layout)
      builtin.module {}
    }
    hal.executable.variant public @ptx target(#ptx) {
      hal.executable.export public @add ordinal(0) layout(#layout)
      builtin.module {}
    }
  }
  hal.executable private @cpu_only {
    hal.executable.variant public @x86 target(#cpu) {
      hal.executable.export public @mul ordinal(0) layout(#layout)
      builtin.module {}
    }
  }
  util.func public @f(%arg0: !stream.resource<external>, %arg1: !stream.resource<external>) -> !stream.timepoint {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %0 = stream.cmd.execute with(%arg0 as %a: !stream.resource<external>{%c16}, %arg1 as %b: !stream.resource<external>{%c16}) {
      stream.cmd.dispatch {@mixed::@x86::@add, @mixed::@arm::@add, @mixed::@spirv::@add, @mixed::@ptx::@add}[%c1, %c1, %c1] {
        ro %a[%c0 for %c16] : !stream.resource<external>{%c16},
        wo %b[%c0 for %c16] : !stream.resource<external>{%c16}
      }
      stream.cmd.dispatch {@cpu_only::@x86::@mul}[%c1, %c1, %c1] {
        ro %a[%c0 for %c16] : !stream.resource<external>{%c16},
        wo %b[%c0 for %c16] : !stream.resource<external>{%c16}
      }
    } => !stream.timepoint
    util.return %0 : !stream.timepoint
  }
}

// -----

// The linked CPU executable has no variant for a Vulkan device: its creation is skipped
// there, and the status fails only where no query of the device's formats succeeded.
// PARTIAL-LABEL: util.initializer
// PARTIAL:         hal.executable.create {{.*}} target(@linked::@x86)
// PARTIAL:       ^bb2:
// PARTIAL-DAG:     %[[X86:.*]] = util.global.load @__device_0_query_0_hal_executable_format_embedded_elf_x86_64 : i1
// PARTIAL-DAG:     %[[SPIRV:.*]] = util.global.load @__device_0_query_1_hal_executable_format_vulkan_spirv_fb : i1
// PARTIAL:         %[[ANY:.*]] = arith.ori %[[X86]], %[[SPIRV]] : i1
// PARTIAL:         %[[OK:.*]] = arith.constant 0 : i32
// PARTIAL:         %[[STATUS:.*]] = arith.select %[[ANY]], %[[OK]], %c14_i32 : i32
// PARTIAL-NEXT:    util.status.check_ok %[[STATUS]], "HAL device `__device_0` does not support any executable format of this module: [embedded-elf-x86_64, vulkan-spirv-fb]"
// PARTIAL-NOT:     util.status.check_ok
module {
  util.global private @__device_0 : !hal.device
  util.global private @__device_0_query_0_hal_executable_format_embedded_elf_x86_64 : i1
  util.global private @__device_0_query_1_hal_executable_format_vulkan_spirv_fb : i1
  util.initializer {
    %device = util.global.load @__device_0 : !hal.device
    %ok, %x86 = hal.device.query<%device : !hal.device> key("hal.executable.format" :: "embedded-elf-x86_64") : i1, i1 = false
    %ok_0, %spirv = hal.device.query<%device : !hal.device> key("hal.executable.format" :: "vulkan-spirv-fb") : i1, i1 = false
    util.global.store %x86, @__device_0_query_0_hal_executable_format_embedded_elf_x86_64 : i1
    util.global.store %spirv, @__device_0_query_1_hal_executable_format_vulkan_spirv_fb : i1
    util.return
  }
  util.global private @__device_0_executable_0_linked : !hal.executable
  util.initializer {
    %c-1 = arith.constant -1 : index
    %c0 = arith.constant 0 : index
    %c14_i32 = arith.constant 14 : i32
    %null = util.null : !hal.executable
    %x86 = util.global.load @__device_0_query_0_hal_executable_format_embedded_elf_x86_64 : i1
    %device = util.global.load @__device_0 : !hal.device
    %0 = arith.select %x86, %c0, %c-1 : index
    %1 = arith.index_cast %0 : index to i64
    cf.switch %1 : i64, [
      default: ^bb2,
      0: ^bb1
    ]
  ^bb1:
    %c-1_i64 = arith.constant -1 : i64
    %executable = hal.executable.create device(%device : !hal.device) affinity(%c-1_i64) target(@linked::@x86) : !hal.executable
    cf.br ^bb3(%executable : !hal.executable)
  ^bb2:
    util.status.check_ok %c14_i32, "HAL device `__device_0` does not support any variant of executable `linked`; available formats: [embedded-elf-x86_64]"
    cf.br ^bb3(%null : !hal.executable)
  ^bb3(%2: !hal.executable):
    util.global.store %2, @__device_0_executable_0_linked : !hal.executable
    util.return
  }
}
