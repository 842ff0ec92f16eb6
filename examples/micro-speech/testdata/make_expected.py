#!/usr/bin/env python3
"""Writes the test inputs of the micro_speech example and TFLite Micro's own outputs on them.

    pip install tflite-micro numpy
    python3 examples/micro-speech/testdata/make_expected.py

Reads ../model/micro_speech_quantized.tflite (TFLite Micro's own model file) and writes, next to this script:
  inputs.bin    CASES x 1960 int8 inputs, one after another
  expected.bin  CASES x 4 int8 outputs of TFLite Micro's interpreter on them
  expected.txt  the same, readable
The firmware, the host example and the usmp_pools! example compare their outputs with
expected.bin byte for byte.
"""
import importlib.metadata
import os
import sys

import numpy as np
from tflite_micro.python.tflite_micro import runtime

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "model", "micro_speech_quantized.tflite")
LABELS = ["silence", "unknown", "yes", "no"]


def inputs():
    """Four fixed 49x40 feature maps: the quietest input, two noises, a striped one."""
    silence = np.full(1960, -128, dtype=np.int8)
    noise_a = np.random.RandomState(1).randint(-128, 128, 1960).astype(np.int8)
    noise_b = np.random.RandomState(2).randint(-128, 64, 1960).astype(np.int8)
    rows, cols = np.divmod(np.arange(1960), 40)
    stripes = (((rows * 7 + cols * 13) % 256) - 128).astype(np.int8)
    return [("silence", silence), ("noise 1", noise_a), ("noise 2", noise_b),
            ("stripes", stripes)]


def main():
    model = os.path.normpath(MODEL)
    if not os.path.exists(model):
        sys.exit(f"error: {model} is missing")
    it = runtime.Interpreter.from_file(model)
    detail = it.get_input_details(0)
    assert list(detail["shape"]) == [1, 1960] and detail["dtype"] == np.int8, detail
    ins, outs, lines = bytearray(), bytearray(), []
    for name, x in inputs():
        it.set_input(x.reshape(1, 1960), 0)
        it.invoke()
        y = np.asarray(it.get_output(0), dtype=np.int8).reshape(4)
        ins += x.tobytes()
        outs += y.tobytes()
        best = LABELS[int(np.argmax(y))]
        lines.append(f"{name}: {' '.join(str(int(v)) for v in y)} ({best})")
        it.reset()
    for file, data in [("inputs.bin", ins), ("expected.bin", outs)]:
        with open(os.path.join(HERE, file), "wb") as f:
            f.write(bytes(data))
    with open(os.path.join(HERE, "expected.txt"), "w") as f:
        version = importlib.metadata.version("tflite-micro")
        f.write(f"# TFLite Micro (tflite-micro {version}, Python) on inputs.bin; "
                "made by make_expected.py\n")
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
