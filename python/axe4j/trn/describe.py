"""What a Trainium request carries beyond the generic description (``axe4j.dispatch.describe``): the bias and scale
of ``exp``/``exp2``/``log2``/``sqrt`` and the workspace buffers of a call (``identity``, ``psum``, ...)."""

from __future__ import annotations


def describe_bias_scale(args, roles, scalars, params, constant):
    """exp(scale * x + bias) on trn: a bias tile becomes operand ``bias``; a constant bias and the scale are params."""
    from tvm.ir import TensorRegion

    bias, scale = (list(args) + [None, None])[2:4]
    if isinstance(bias, TensorRegion):
        roles.append(("bias", bias))
    elif bias is not None:
        scalars["bias"] = bias
        params["bias"] = constant(bias)
    params["scale"] = 1.0 if scale is None else constant(scale)
    if scale is not None:
        scalars["scale"] = scale


def describe_workspace(call, operands, layouts, buffers, regions, layout_of):
    """Workspace buffers of a trn call (``identity``, ``psum``, ...) as whole-buffer operands named by their key."""
    workspace = getattr(call, "workspace", None) or {}
    for key in sorted(str(k) for k in workspace.keys()):
        buffer = workspace[key]
        shape = [int(n) for n in buffer.shape]
        operands.append({"role": key, "name": str(buffer.name), "dtype": str(buffer.dtype), "shape": shape,
                         "start": [0] * len(shape), "extent": shape, "elem_offset": int(buffer.elem_offset)})
        layouts.append(layout_of(buffer))
        buffers[key] = buffer
        regions[key] = ([0] * len(shape), shape)
