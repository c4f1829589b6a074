#!/usr/bin/env python3
"""Capture a PyTorch model's ATen calls into a kforge workload file.

For eager models that do not script or trace, and for KernelBench-style problems (a Python file that
defines Model, get_inputs and get_init_inputs). Every ATen call the model makes is recorded through a
TorchDispatchMode with its schema, its arguments in schema order (tensors as shape, dtype and strides,
integer tensors with their value range; scalars and lists as values) and its CPU time, and written as
the "calls" of a workload file (docs/DESIGN.md, "Workloads"). kforge-cli profile then makes the
operator cards from those calls.

    python3 kforge_capture.py problem FILE.py --out W.json

As a library (works with PyTorch 1.13 and later):

    from kforge_capture import capture_workload
    capture_workload(model, [x], "w.json", name="my-model")

Where the model traces, the problem importer also writes W.pt (TorchScript, which kforge's worker
profiles itself) and W.inputs.pt (the inputs, buffers i0, i1, ... of a TorchScript module). Inputs larger
than --max-input-mib together (KernelBench's are gigabytes) are described instead, each by its shape,
dtype and how it looks drawn (uniform [0, 1), normal, 0/1 or an integer range), and the worker draws them.

A problem runs on CUDA when this Python's torch sees a GPU (--device), in the mode its file leaves the
model in: KernelBench runs its models as built, in training mode, so a BatchNorm normalizes by the
batch's statistics.
"""

import argparse
import importlib.util
import json
import os
import sys
import time
import traceback

import torch
from torch.utils._python_dispatch import TorchDispatchMode

FORMAT = 1
MAX_SOURCE_BYTES = 64 * 1024  # a problem file above this is not copied into its workload

_DTYPES = {
    torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float64: "float64",
    torch.int64: "int64", torch.int32: "int32", torch.int16: "int16", torch.int8: "int8", torch.uint8: "uint8",
    torch.bool: "bool", torch.complex64: "complex64", torch.complex128: "complex128",
}
# c10::ScalarType numbering: a dtype argument travels to the dispatcher as this integer.
_SCALAR_TYPE = {
    torch.uint8: 0, torch.int8: 1, torch.int16: 2, torch.int32: 3, torch.int64: 4, torch.float16: 5,
    torch.float32: 6, torch.float64: 7, torch.complex64: 9, torch.complex128: 10, torch.bool: 11, torch.bfloat16: 15,
}
_RANGE_MAX_NUMEL = 1 << 22


def _tensor_meta(t):
    meta = {"shape": list(t.shape), "dtype": _DTYPES.get(t.dtype, str(t.dtype).replace("torch.", "")),
            "strides": list(t.stride()) if t.layout == torch.strided else [0] * t.dim()}
    if (not t.is_floating_point() and not t.is_complex() and t.dtype != torch.bool
            and 0 < t.numel() <= _RANGE_MAX_NUMEL):
        meta["min"] = float(t.min())
        meta["max"] = float(t.max())
    return meta


def _arg(value, name):
    a = {"name": name} if name else {}
    if value is None:
        a["none"] = True
    elif isinstance(value, torch.Tensor):
        a["tensor"] = _tensor_meta(value)
    elif isinstance(value, bool):
        a["bool"] = value
    elif isinstance(value, int):
        a["int"] = value
    elif isinstance(value, float):
        a["double"] = value
    elif isinstance(value, str):
        a["str"] = value
    elif isinstance(value, torch.dtype) and value in _SCALAR_TYPE:
        a["int"] = _SCALAR_TYPE[value]
    elif isinstance(value, (list, tuple)):
        items = list(value)
        if all(isinstance(v, bool) for v in items) and items:
            a["bool_list"] = items
        elif all(isinstance(v, int) and not isinstance(v, bool) for v in items):
            a["int_list"] = items
        elif all(isinstance(v, (int, float)) for v in items):
            a["double_list"] = [float(v) for v in items]
        elif all(isinstance(v, torch.Tensor) for v in items):
            a["tensor_list"] = [_tensor_meta(v) for v in items]
        else:
            a["other"] = "list " + repr(items)[:200]
    else:
        a["other"] = type(value).__name__ + " " + str(value)[:200]
    return a


class CallCapture(TorchDispatchMode):
    """Records every ATen call made under it: operator, schema, arguments in schema order, CPU time."""

    def __init__(self, sync=False):
        super().__init__()
        self.sync = sync
        self.calls = []
        self._t0 = time.perf_counter_ns()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        schema = func._schema
        full = []
        for i, a in enumerate(schema.arguments):
            if not a.kwarg_only and i < len(args):
                v = args[i]
            elif a.name in kwargs:
                v = kwargs[a.name]
            elif a.default_value is not None or a.has_default_value():
                v = a.default_value
            else:
                v = None
            full.append(_arg(v, a.name))
        if self.sync:  # CUDA calls return before they finish: each call's time is its own only when waited for
            torch.cuda.synchronize()
        start = time.perf_counter_ns()
        out = func(*args, **kwargs)
        if self.sync:
            torch.cuda.synchronize()
        end = time.perf_counter_ns()
        self.calls.append({"op": schema.name, "overload": schema.overload_name, "schema": str(schema), "args": full,
                           "start_us": (start - self._t0) / 1e3, "dur_us": (end - start) / 1e3, "depth": 0, "tid": 0})
        return out


def capture_calls(model, inputs):
    with torch.no_grad():
        model(*inputs)  # warm-up: one-time work (lazy initialization, allocator growth) stays out of the record
        with CallCapture(sync=any(isinstance(t, torch.Tensor) and t.is_cuda for t in inputs)) as cap:
            model(*inputs)
    return cap.calls


class _Inputs(torch.nn.Module):
    def __init__(self, tensors):
        super().__init__()
        for i, t in enumerate(tensors):
            self.register_buffer("i%d" % i, t.detach().clone())

    def forward(self):
        return None


def save_inputs(tensors, path):
    """Saves tensors as buffers i0, i1, ... of a TorchScript module, which libtorch reads with torch::jit::load."""
    torch.jit.script(_Inputs(tensors)).save(path)


def input_spec(t):
    """How a workload file describes an input the worker draws: its shape, dtype and a draw that looks like it."""
    spec = {"shape": list(t.shape), "dtype": _DTYPES.get(t.dtype, str(t.dtype).replace("torch.", ""))}
    if t.numel() == 0:
        spec["init"] = "zeros"
    elif t.dtype == torch.bool:
        spec["init"] = "randint:0:2"
    elif not t.is_floating_point():
        spec["init"] = "randint:%d:%d" % (int(t.min()), int(t.max()) + 1)
    else:
        lo, hi = float(t.min()), float(t.max())
        spec["init"] = "zeros" if lo == hi == 0 else "ones" if lo == hi == 1 else "rand" if 0 <= lo and hi <= 1 else "randn"
    return spec


def workload_json(name, model_kind, model_path, calls, inputs_captured=None, input_specs=None, seed=0):
    w = {"kforge_workload": FORMAT, "name": name, "model": {"kind": model_kind, "path": model_path}, "calls": calls}
    if inputs_captured:
        w["inputs"] = {"seed": seed, "captured": inputs_captured}
    else:
        w["inputs"] = {"seed": seed, "tensors": input_specs or []}
    return w


def capture_workload(model, inputs, out, name=None, model_kind="problem", model_path="(eager)"):
    """Records the model's ATen calls on `inputs` and writes the workload file `out`, the inputs beside it."""
    model.eval()
    calls = capture_calls(model, inputs)
    stem = os.path.splitext(out)[0]
    captured = None
    if inputs and all(isinstance(t, torch.Tensor) for t in inputs):
        save_inputs(inputs, stem + ".inputs.pt")
        captured = os.path.basename(stem) + ".inputs.pt"
    w = workload_json(name or os.path.basename(stem), model_kind, model_path, calls, captured)
    with open(out, "w") as f:
        json.dump(w, f, indent=1)
    return w


class _no_context:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def pick_device(device):
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("--device cuda: this Python's torch %s sees no CUDA device" % torch.__version__)
    return device


def import_problem(path, out, device="cpu", max_input_mib=1024):
    """A KernelBench-style problem file as a workload: its calls, and TorchScript where the model traces."""
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location("kforge_problem_" + name, path)
    if spec is None:
        raise RuntimeError("%s is not a Python file" % path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise RuntimeError("the problem %s raised while loading: %s: %s" % (path, type(e).__name__, e)) from e
    for needed in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(module, needed):
            raise RuntimeError("the problem %s defines no %s (a problem defines Model, get_inputs and get_init_inputs)"
                               % (path, needed))
    try:
        torch.manual_seed(0)
        # Made where they run (PyTorch 2 makes factory calls under a device context there): drawing a
        # KernelBench input on the CPU first takes seconds.
        with torch.device(device) if device != "cpu" and hasattr(torch, "set_default_device") else _no_context():
            model = module.Model(*module.get_init_inputs()).to(device)
            inputs = [t.to(device) if isinstance(t, torch.Tensor) else t for t in module.get_inputs()]
    except Exception as e:
        raise RuntimeError("the problem %s raised while building its model or inputs: %s: %s"
                           % (path, type(e).__name__, e)) from e
    try:
        calls = capture_calls(model, inputs)
    except Exception as e:
        raise RuntimeError("the problem %s raised while running its model: %s: %s" % (path, type(e).__name__, e)) from e
    stem = os.path.splitext(out)[0]
    captured, specs = None, None
    tensors = bool(inputs) and all(isinstance(t, torch.Tensor) for t in inputs)
    if tensors and sum(t.numel() * t.element_size() for t in inputs) > max_input_mib * (1 << 20):
        specs = [input_spec(t) for t in inputs]
    elif tensors:
        save_inputs([t.cpu() for t in inputs], stem + ".inputs.pt")
        captured = os.path.basename(stem) + ".inputs.pt"
    kind, model_path = "problem", os.path.relpath(os.path.abspath(path), os.path.dirname(os.path.abspath(out)))
    if tensors:
        try:
            with torch.no_grad():
                traced = torch.jit.trace(model, tuple(inputs), check_trace=False)
            traced.cpu().save(stem + ".pt")
            kind, model_path = "torchscript", os.path.basename(stem) + ".pt"
        except Exception as e:  # eager-only models keep the calls captured here
            print("kforge_capture: %s does not trace (%s: %s); its calls are kept from the eager run"
                  % (path, type(e).__name__, str(e).splitlines()[0] if str(e) else ""), file=sys.stderr)
    w = workload_json(name, kind, model_path, calls, captured, specs)
    w["problem"] = os.path.basename(path)
    # The problem's text defines its whole-forward cards (an LLM proposer reads it); a huge file is left out.
    with open(path, encoding="utf-8", errors="replace") as f:
        source = f.read(MAX_SOURCE_BYTES + 1)
    if len(source) <= MAX_SOURCE_BYTES:
        w["problem_source"] = source
    with open(out, "w") as f:
        json.dump(w, f, indent=1)
    return w


def main(argv=None):
    p = argparse.ArgumentParser(description="Capture a PyTorch model's ATen calls into a kforge workload file.")
    sub = p.add_subparsers(dest="command", required=True)
    pp = sub.add_parser("problem", help="import a KernelBench-style problem file (Model, get_inputs, get_init_inputs)")
    pp.add_argument("file")
    pp.add_argument("--out", required=True, help="the workload file to write (W.json)")
    pp.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"],
                    help="where the forward runs while its calls are captured (auto: CUDA when there is one)")
    pp.add_argument("--max-input-mib", type=float, default=1024,
                    help="inputs larger than this together are described (shape, dtype, draw), not saved")
    args = p.parse_args(argv)
    try:
        w = import_problem(args.file, args.out, pick_device(args.device), args.max_input_mib)
    except Exception as e:
        print("kforge_capture: %s" % e, file=sys.stderr)
        if os.environ.get("KFORGE_CAPTURE_DEBUG"):
            traceback.print_exc()
        return 1
    print("kforge_capture: %s: %d ATen calls -> %s (%s%s)" % (args.file, len(w["calls"]), args.out, w["model"]["kind"],
                                                          ", inputs described" if "tensors" in w["inputs"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
