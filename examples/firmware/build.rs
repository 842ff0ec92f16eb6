// Copies memory.x to OUT_DIR for cortex-m-rt, plans the pools (usmp.toml: usmp.rs and
// usmp.x in OUT_DIR), and writes the kernels' parameters from the same model file.
fn main() {
    micro_speech::build::firmware("../micro-speech/model/micro_speech_quantized.tflite");
}
