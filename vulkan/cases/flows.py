"""Quantization flows: how each recipe's Q/DQ pattern is produced.

A flow takes a float ``nn.Module`` and sample inputs and returns the
``torch.export`` program of the quantized model (before ``to_edge``), which
is what a :class:`harness.graphs.cases.ModelInputs` may carry. Flows are the ones
users run:

- PT2E: ``export -> prepare_pt2e -> calibrate -> convert_pt2e -> export``
  with ``VulkanQuantizer`` (its config helpers, plus a static-activation
  config built from the same specs, which 1.5.1 has no helper for) or
  ``XNNPACKQuantizer`` (static, per-channel), whose Q/DQ patterns the Vulkan
  fusions also match;
- torchao ``quantize_`` (``IntxWeightOnlyConfig``,
  ``Int8DynamicActivationIntxWeightConfig``), then ``export``;
- ``hand``: the module already calls ``quantized_decomposed`` ops, it is only exported.

Calibration runs the sample and ``CALIBRATION_DRAWS`` more draws of the same
distribution (seeded from the sample's shape), so "typical" inputs seldom
clip and a case stays a pure function of its shape and seed (same seed, same
report).
"""

from __future__ import annotations

from typing import Callable, Optional

import torch

from harness.graphs.quantizers import patterns_memoized, pt2e

__all__ = ["CALIBRATION_DRAWS", "calibration_set", "vulkan_weight_only", "vulkan_dynamic", "vulkan_static",
           "xnnpack_static_per_channel", "xnnpack_static", "torchao_intx_weight_only", "torchao_8da_intx", "hand",
           "VULKAN_PT2E"]

# (model, sample inputs, shape) -> ExportedProgram; the shape lets a flow take e.g. its group size from it.
Flow = Callable[[torch.nn.Module, tuple, dict], "torch.export.ExportedProgram"]


def _export(model: torch.nn.Module, inputs: tuple):
    if not isinstance(model, torch.fx.GraphModule):  # pt2e-converted modules refuse .eval()
        model = model.eval()
    with torch.no_grad():
        return torch.export.export(model, tuple(inputs), strict=False)


CALIBRATION_DRAWS = 7


def calibration_set(inputs: tuple) -> list[tuple]:
    """The sample plus draws like it: float tensors redrawn N(0, std of the sample), others kept."""
    out = [tuple(inputs)]
    for j in range(CALIBRATION_DRAWS):
        gen = torch.Generator().manual_seed(7919 + j)
        out.append(tuple(torch.randn(x.shape, generator=gen) * float(x.std()) if isinstance(x, torch.Tensor)
                         and x.dtype.is_floating_point and x.numel() > 1 else x for x in inputs))
    return out


# Each pattern graph exported once per process (the engine's memo; the Vulkan search wraps every flow in it).
quantizer_patterns_memoized = patterns_memoized


def _pt2e(model: torch.nn.Module, inputs: tuple, quantizer):
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    captured = _export(model, inputs).module()
    prepared = prepare_pt2e(captured, quantizer)
    with torch.no_grad():
        for batch in calibration_set(inputs):
            prepared(*batch)
    converted = convert_pt2e(prepared)
    return _export(converted, inputs)


def vulkan_weight_only(bits: int) -> Flow:
    """VulkanQuantizer ``get_symmetric_quantization_config(is_dynamic=False, weight_bits=bits)``."""

    def flow(model, inputs, shape=None):
        from executorch.backends.vulkan.quantizer.vulkan_quantizer import (
            VulkanQuantizer,
            get_symmetric_quantization_config,
        )

        q = VulkanQuantizer().set_global(get_symmetric_quantization_config(is_dynamic=False, weight_bits=bits))
        return _pt2e(model, inputs, q)

    flow.__name__ = f"vulkan_weight_only_{bits}"
    return flow


def vulkan_dynamic(bits: int) -> Flow:
    """VulkanQuantizer ``get_symmetric_quantization_config(is_dynamic=True, weight_bits=bits)``."""

    def flow(model, inputs, shape=None):
        from executorch.backends.vulkan.quantizer.vulkan_quantizer import (
            VulkanQuantizer,
            get_symmetric_quantization_config,
        )

        q = VulkanQuantizer().set_global(get_symmetric_quantization_config(is_dynamic=True, weight_bits=bits))
        return _pt2e(model, inputs, q)

    flow.__name__ = f"vulkan_dynamic_{bits}"
    return flow


def vulkan_static(output: bool) -> Flow:
    """VulkanQuantizer with static per-tensor int8 activations (input, and output if ``output``).

    executorch 1.5.1 has no helper for it; the specs are the helper's own weight
    spec plus the standard static activation spec (HistogramObserver, affine int8).
    """

    def flow(model, inputs, shape=None):
        from executorch.backends.vulkan.quantizer.vulkan_quantizer import (
            VulkanQuantizer,
            get_symmetric_quantization_config,
        )
        from torchao.quantization.pt2e import HistogramObserver
        from torchao.quantization.pt2e.quantizer import QuantizationConfig, QuantizationSpec

        act = QuantizationSpec(
            dtype=torch.int8, quant_min=-128, quant_max=127, qscheme=torch.per_tensor_affine,
            is_dynamic=False, observer_or_fake_quant_ctr=HistogramObserver.with_args(eps=2**-12),
        )
        weight = get_symmetric_quantization_config(is_dynamic=False, weight_bits=8).weight
        config = QuantizationConfig(input_activation=act, output_activation=act if output else None,
                                    weight=weight, bias=None, is_qat=False)
        return _pt2e(model, inputs, VulkanQuantizer().set_global(config))

    flow.__name__ = f"vulkan_static_{'io' if output else 'in'}"
    return flow


def xnnpack_static_per_channel(model, inputs, shape=None):
    """XNNPACKQuantizer ``get_symmetric_quantization_config(is_per_channel=True, is_dynamic=False)``."""
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )

    q = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True, is_dynamic=False))
    return _pt2e(model, inputs, q)


def xnnpack_static(per_channel: bool = True) -> Flow:
    """XNNPACKQuantizer static activations, per-channel or per-tensor symmetric weights."""

    def flow(model, inputs, shape=None):
        from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
            XNNPACKQuantizer,
            get_symmetric_quantization_config,
        )

        config = get_symmetric_quantization_config(is_per_channel=per_channel, is_dynamic=False)
        return _pt2e(model, inputs, XNNPACKQuantizer().set_global(config))

    flow.__name__ = f"xnnpack_static_{'per_channel' if per_channel else 'per_tensor'}"
    return flow


def _torchao(config_fn: Callable[[dict], object], only: type = None) -> Flow:
    def flow(model, inputs, shape=None):
        from torchao.quantization.quant_api import quantize_

        filter_fn = (lambda mod, fqn: isinstance(mod, only)) if only is not None else None
        quantize_(model, config_fn(shape or {}), filter_fn=filter_fn)
        return _export(model, inputs)

    return flow


def _group(group: Optional[int], shape: dict) -> int:
    return shape["G"] if group is None else group


def torchao_intx_weight_only(bits: int, group: Optional[int] = None, symmetric: bool = True,
                             only: type = None) -> Flow:
    """``IntxWeightOnlyConfig(weight_dtype=int<bits>, PerGroup(G) or PerAxis(0), sym/asym)``.

    ``group=None``: the group size is the shape's ``G``; ``0``: per-axis (one group per row).
    """

    def config(shape):
        g = _group(group, shape)
        from torchao.quantization.granularity import PerAxis, PerGroup
        from torchao.quantization.quant_api import IntxWeightOnlyConfig
        from torchao.quantization.quant_primitives import MappingType

        return IntxWeightOnlyConfig(
            weight_dtype=getattr(torch, f"int{bits}"),
            granularity=PerGroup(g) if g else PerAxis(0),
            mapping_type=MappingType.SYMMETRIC if symmetric else MappingType.ASYMMETRIC,
        )

    flow = _torchao(config, only)
    flow.__name__ = f"torchao_int{bits}_wo_{'axis' if group == 0 else 'group'}_{'sym' if symmetric else 'asym'}"
    return flow


def torchao_8da_intx(bits: int, group: Optional[int] = None, symmetric: bool = True) -> Flow:
    """``Int8DynamicActivationIntxWeightConfig(weight_dtype=int<bits>, PerGroup(G) or PerAxis(0))``."""

    def config(shape):
        g = _group(group, shape)
        from torchao.quantization.granularity import PerAxis, PerGroup
        from torchao.quantization.quant_api import Int8DynamicActivationIntxWeightConfig
        from torchao.quantization.quant_primitives import MappingType

        return Int8DynamicActivationIntxWeightConfig(
            weight_dtype=getattr(torch, f"int{bits}"),
            weight_granularity=PerGroup(g) if g else PerAxis(0),
            weight_mapping_type=MappingType.SYMMETRIC if symmetric else MappingType.ASYMMETRIC,
        )

    flow = _torchao(config)
    flow.__name__ = f"torchao_8da{bits}w_{'axis' if group == 0 else 'group'}"
    return flow


def hand(model, inputs, shape=None):
    """Hand-built Q/DQ graph: the module's own quantized_decomposed calls, exported as is."""
    return _export(model, inputs)



# Random programs under Vulkan's quantizer (the `passgate.quantizers` entry point `vulkan`): VulkanQuantizer as its
# config helper gives it by default (weight-only int8 linears, the only op it annotates), as source text run by a
# quantized random case and printed in its program.
VULKAN_PT2E = pt2e("vulkan", '''
    from executorch.backends.vulkan.quantizer.vulkan_quantizer import (
        VulkanQuantizer,
        get_symmetric_quantization_config,
    )

    quantizer = VulkanQuantizer().set_global(get_symmetric_quantization_config())
''', "VulkanQuantizer, its default config: weight-only symmetric per-channel int8 linears")
