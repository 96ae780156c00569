"""aotc's MLIR passes and the machinery that runs them next to upstream passes.

    from aotc.passes import run_pipeline, CheckDtypes
    run_pipeline(module, ["canonicalize", "cse", CheckDtypes(frozenset({"f64"}))])

A pipeline is a list of upstream pass-pipeline strings and aotc passes (``ModulePass``
instances); ``run_pipeline`` runs them in one MLIR PassManager. Each pass lives in a file
of its own and is registered by name in ``REGISTRY`` for ``aotc-opt`` and lit tests.
"""

from __future__ import annotations

from .base import ModulePass, PassError, REGISTRY, register
from .autodiff import DropCustomDerivatives, DropStopGradients, Jvp, Vjp
from .batching import Batch
from .check_dtypes import CheckDtypes
from .copy_shared_destinations import CopySharedDestinations
from .materialize_constants import MaterializeConstants
from .donation import Donate, pair_donations
from .device_executables import PartialExecutables, SplitExecutablesPerBackend
from .drop_carry_barriers import DropCarryBarriers
from .expand_math import ExpandFloat32Math, ExpandMath
from .expand_minmax import ExpandFloatMinMax
from .fold_empty import FoldEmptyLoops
from .fold_to_arguments import FoldToArguments
from .fold_splats import FoldSplats
from .fuse_siblings import FuseSiblings
from .guard_known_nans import GuardKnownNans
from .hoist_scan_matmuls import HoistScanMatmuls
from .host_scalars import HostScalars
from .isolate_matmuls import IsolateMatmuls
from .loops_in_dispatch import LoopsInDispatch
from .conv_tiles import TileConvolutions
from .matmul_tiles import TileMatmuls
from .reduction_tiles import TileReductions
from .kernel_barriers import KeepUnusedKernelResults
from .kernel_roots import RootKernelsForGpu
from .split_complex_selects import SplitComplexSelects
from .separate_complex_parts import SeparateComplexParts
from .complex_pads import ComplexPadsAsInserts
from .separate_gather_slices import SeparateGatherSlices
from .narrow_ints import CheckNarrowArguments, WidenNarrowInts
from .pipeline import CLEANUP, run_pipeline
from .separate_returns import SeparateReturnedUpdates
from .share_dear_values import ShareDearValues
from .share_kernels import SHARE_KERNELS, ExposeKernels, GuardKernels
from .shield_reductions import ShieldReductions
from .shield_strided_slices import ShieldStridedSlices
from .split_bool_broadcasts import SplitBoolBroadcasts
from .unroll_loops import UnrollLoops

__all__ = [
    "ModulePass", "PassError", "REGISTRY", "register", "Batch", "CheckDtypes", "ExpandFloatMinMax",
    "SeparateReturnedUpdates", "FuseSiblings", "FoldEmptyLoops", "FoldSplats",
    "ShieldReductions", "ShieldStridedSlices", "SplitBoolBroadcasts",
    "GuardKnownNans", "FoldToArguments", "DropCarryBarriers", "HoistScanMatmuls",
    "HostScalars", "PartialExecutables", "SplitExecutablesPerBackend",
    "CopySharedDestinations", "MaterializeConstants", "IsolateMatmuls", "LoopsInDispatch",
    "KeepUnusedKernelResults", "RootKernelsForGpu", "SplitComplexSelects",
    "SeparateComplexParts", "ComplexPadsAsInserts", "SeparateGatherSlices",
    "TileConvolutions", "TileMatmuls", "TileReductions", "ShareDearValues", "UnrollLoops",
    "ExposeKernels", "GuardKernels", "SHARE_KERNELS",
    "CLEANUP", "Donate", "pair_donations", "run_pipeline", "WidenNarrowInts",
    "CheckNarrowArguments", "ExpandMath", "ExpandFloat32Math", "Vjp", "Jvp", "DropStopGradients",
    "DropCustomDerivatives",
]
