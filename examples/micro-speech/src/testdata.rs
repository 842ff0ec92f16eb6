//! The test inputs and TFLite Micro's outputs on them (`testdata/make_expected.py` made
//! both with the `tflite-micro` Python package; `testdata/expected.txt` is readable).

const INPUTS: &[u8] = include_bytes!("../testdata/inputs.bin");
const EXPECTED: &[u8] = include_bytes!("../testdata/expected.bin");

/// Bytes of one input: 49 frames x 40 features, int8.
pub const INPUT_BYTES: usize = 1960;
/// Bytes of one output: a score per label, int8.
pub const OUTPUT_BYTES: usize = 4;
/// How many test cases there are.
pub const CASES: usize = INPUTS.len() / INPUT_BYTES;
/// What each test input is.
pub const NAMES: [&str; CASES] = ["silence", "noise 1", "noise 2", "stripes"];
/// The model's labels, in output order.
pub const LABELS: [&str; OUTPUT_BYTES] = ["silence", "unknown", "yes", "no"];

const _: () =
    assert!(INPUTS.len() == CASES * INPUT_BYTES && EXPECTED.len() == CASES * OUTPUT_BYTES);

/// Input `case`.
pub fn input(case: usize) -> &'static [u8] {
    &INPUTS[case * INPUT_BYTES..(case + 1) * INPUT_BYTES]
}

/// TFLite Micro's output on input `case`.
pub fn expected(case: usize) -> &'static [u8] {
    &EXPECTED[case * OUTPUT_BYTES..(case + 1) * OUTPUT_BYTES]
}

/// The label with the highest score (the first on a tie, as `numpy.argmax`).
pub fn label(output: &[u8]) -> &'static str {
    let mut best = 0;
    for (i, &v) in output.iter().enumerate().take(OUTPUT_BYTES) {
        if (v as i8) > (output[best] as i8) {
            best = i;
        }
    }
    LABELS[best]
}

/// One case's output next to TFLite Micro's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Which case.
    pub case: usize,
    /// What the program computed.
    pub output: [u8; OUTPUT_BYTES],
}

impl Outcome {
    /// Whether the output equals TFLite Micro's, byte for byte.
    pub fn matches(&self) -> bool {
        self.output[..] == *expected(self.case)
    }
}

fn scores(f: &mut core::fmt::Formatter<'_>, bytes: &[u8]) -> core::fmt::Result {
    for (i, &b) in bytes.iter().enumerate() {
        write!(f, "{}{:4}", if i == 0 { "" } else { " " }, b as i8)?;
    }
    Ok(())
}

impl core::fmt::Display for Outcome {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{:<8} ", NAMES[self.case])?;
        scores(f, &self.output)?;
        write!(f, "  {:<8}", label(&self.output))?;
        if self.matches() {
            write!(f, "  = TFLite Micro")
        } else {
            write!(f, "  DIFFERS from TFLite Micro: ")?;
            scores(f, expected(self.case))
        }
    }
}
