#!/usr/bin/env python3
"""Writes the test inputs of the Cortex-M0 example and TFLite Micro's own outputs on them.

    pip install tflite-micro numpy
    python3 examples/firmware-m0/testdata/make_expected.py

Reads ../model/hello_world_int8.tflite (TFLite Micro's hello_world model, y = sin(x)) and
writes, next to this script:
  inputs.bin    one int8 input per case
  expected.bin  TFLite Micro's interpreter's int8 output for each
  expected.txt  the same, readable
The firmware compares its outputs with expected.bin byte for byte.
"""
import importlib.metadata
import os
import sys

import numpy as np
from tflite_micro.python.tflite_micro import runtime

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "model", "hello_world_int8.tflite")


def main():
    model = os.path.normpath(MODEL)
    if not os.path.exists(model):
        sys.exit(f"error: {model} is missing")
    it = runtime.Interpreter.from_file(model)
    detail = it.get_input_details(0)
    assert list(detail["shape"]) == [1, 1] and detail["dtype"] == np.int8, detail
    scale, zero = detail["quantization_parameters"]["scales"][0], \
        detail["quantization_parameters"]["zero_points"][0]
    # x from 0 to 2*pi in 16 steps, quantized as the model's input.
    xs = [int(np.clip(np.round(x / scale + zero), -128, 127))
          for x in np.linspace(0.0, 2 * np.pi, 16)]
    ins, outs, lines = bytearray(), bytearray(), []
    for q in xs:
        it.set_input(np.array([[q]], dtype=np.int8), 0)
        it.invoke()
        y = int(np.asarray(it.get_output(0), dtype=np.int8).reshape(1)[0])
        ins += np.int8(q).tobytes()
        outs += np.int8(y).tobytes()
        lines.append(f"{q} -> {y}")
        it.reset()
    for file, data in [("inputs.bin", ins), ("expected.bin", outs)]:
        with open(os.path.join(HERE, file), "wb") as f:
            f.write(bytes(data))
    with open(os.path.join(HERE, "expected.txt"), "w") as f:
        version = importlib.metadata.version("tflite-micro")
        f.write(f"# TFLite Micro (tflite-micro {version}, Python) on inputs.bin; "
                "made by make_expected.py\n")
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
