//! What can be wrong with a model or with lowering it to a problem, and where.
//!
//! The locus is structural (call 3, its second read) so each front end can point at the
//! right place its own way: the JSON IR reader at a line and column, the `.tflite` reader
//! by operator and tensor name, usmp.toml at a key.

use std::fmt;

/// A field of a tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TensorField {
    /// The tensor as a whole, or its name.
    Name,
    /// Its size.
    Size,
    /// Its alignment.
    Alignment,
}

/// A part of a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallField {
    /// The call as a whole, or its operator name.
    Op,
    /// Its target.
    Target,
    /// Its k-th read.
    Read(usize),
    /// Its k-th write.
    Write(usize),
    /// Its k-th scratch allocation.
    Scratch(usize),
    /// Its k-th in-place declaration.
    InPlace(usize),
    /// Its k-th overlap declaration.
    Overlap(usize),
}

/// Where an error is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelLocus {
    /// A tensor.
    Tensor(usize, TensorField),
    /// A call.
    Call(usize, CallField),
    /// The k-th entry of the model's inputs.
    Input(usize),
    /// The k-th entry of the model's outputs.
    Output(usize),
    /// The k-th scratch rule of the planning options.
    ScratchRule(usize),
    /// The pool list.
    Pools,
}

/// What is wrong. Every variant names what it is about, so the message reads on its own.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelErrorKind {
    /// An index that names no tensor.
    NoSuchTensor {
        /// The index.
        index: usize,
    },
    /// An activation read before any call wrote it.
    ReadBeforeWritten {
        /// The tensor.
        tensor: String,
        /// The reading call.
        call: String,
    },
    /// An activation written by two calls.
    WrittenTwice {
        /// The tensor.
        tensor: String,
        /// The first writer.
        first: String,
        /// The second writer.
        second: String,
    },
    /// A call writes a constant.
    WritesConstant {
        /// The tensor.
        tensor: String,
        /// The call.
        call: String,
    },
    /// A call writes a model input.
    WritesInput {
        /// The tensor.
        tensor: String,
        /// The call.
        call: String,
    },
    /// A model output that nothing writes.
    OutputNeverWritten {
        /// The tensor.
        tensor: String,
    },
    /// An alignment that is not a power of two.
    BadAlignment {
        /// The tensor or scratch.
        what: String,
        /// The alignment given.
        alignment: u64,
    },
    /// Two scratch allocations of one call share a name.
    DuplicateScratch {
        /// The name.
        name: String,
        /// The call.
        call: String,
    },
    /// An in-place declaration that cannot hold.
    BadInPlace {
        /// The output.
        output: String,
        /// The input.
        input: String,
        /// Why not.
        reason: String,
    },
    /// A declared overlap that cannot hold.
    BadOverlap {
        /// The output.
        output: String,
        /// The input.
        input: String,
        /// Why not.
        reason: String,
    },
    /// A call runs on a target that no pool is accessible from.
    TargetWithoutPool {
        /// The target.
        target: String,
        /// The call.
        call: String,
        /// `workspace` or `constant`.
        kind: &'static str,
    },
    /// A buffer used by several targets that no single pool serves.
    NoSharedPool {
        /// The buffer.
        buffer: String,
        /// The targets using it.
        targets: Vec<String>,
    },
    /// Constant data but no constant pool, or activations but no workspace pool.
    NoPoolOfKind {
        /// `workspace` or `constant`.
        kind: &'static str,
        /// A buffer that needs one.
        buffer: String,
    },
    /// A scratch rule that matches no call.
    RuleMatchesNothing {
        /// The rule's selector as written.
        selector: String,
        /// How many calls there are.
        calls: usize,
    },
    /// A size that overflows when rounded up.
    SizeOverflow {
        /// The buffer.
        buffer: String,
    },
    /// The planning problem built from the model was rejected.
    Problem(String),
}

/// A model or lowering error: where, and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelError {
    /// Where.
    pub locus: ModelLocus,
    /// What.
    pub kind: ModelErrorKind,
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.kind.fmt(f)
    }
}

impl std::error::Error for ModelError {}

impl fmt::Display for ModelErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ModelErrorKind::*;
        match self {
            NoSuchTensor { index } => write!(f, "there is no tensor {index}"),
            ReadBeforeWritten { tensor, call } => write!(
                f,
                "tensor \"{tensor}\" is read by {call} before any call writes it; write it \
                 in an earlier call or list it in the model's inputs"
            ),
            WrittenTwice {
                tensor,
                first,
                second,
            } => write!(
                f,
                "tensor \"{tensor}\" is written by {first} and again by {second}; each \
                 activation has one writer (give the second result its own tensor)"
            ),
            WritesConstant { tensor, call } => write!(
                f,
                "{call} writes constant \"{tensor}\"; constants are read-only (make it an \
                 activation or state)"
            ),
            WritesInput { tensor, call } => write!(
                f,
                "{call} writes model input \"{tensor}\"; inputs are given by the caller \
                 (write a new tensor instead)"
            ),
            OutputNeverWritten { tensor } => write!(
                f,
                "model output \"{tensor}\" is never written; a call must write it"
            ),
            BadAlignment { what, alignment } => write!(
                f,
                "{what} has alignment {alignment}, which is not a power of two; write 1, 2, \
                 4, 8, 16, ..."
            ),
            DuplicateScratch { name, call } => write!(
                f,
                "{call} declares scratch \"{name}\" twice; give each its own name"
            ),
            BadInPlace { .. } | BadOverlap { .. } => shared(self, f),
            TargetWithoutPool { target, call, kind } => write!(
                f,
                "{call} runs on target \"{target}\" but no {kind} pool is accessible from \
                 it; add \"{target}\" to the `targets` of a {kind} pool"
            ),
            NoSharedPool { buffer, targets } => {
                let targets: Vec<String> = targets.iter().map(|t| format!("\"{t}\"")).collect();
                let targets = targets.join(", ");
                write!(
                    f,
                    "\"{buffer}\" is used by targets {targets} but no pool is accessible from \
                     all of them; give one pool all these targets"
                )
            }
            NoPoolOfKind { kind, buffer } => write!(
                f,
                "\"{buffer}\" needs a {kind} pool but none is configured; add a pool with \
                 kind \"{kind}\""
            ),
            RuleMatchesNothing { selector, calls } => write!(
                f,
                "scratch rule for {selector} matches no call (the model has {calls} calls); \
                 name an operator the model uses or a call index below {calls}"
            ),
            SizeOverflow { buffer } => write!(
                f,
                "\"{buffer}\" is too large: its size overflows 64 bits when rounded up"
            ),
            Problem(message) => f.write_str(message),
        }
    }
}

/// The messages of the kinds about tensors that would share memory.
fn shared(kind: &ModelErrorKind, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    use ModelErrorKind::*;
    match kind {
        BadInPlace {
            output,
            input,
            reason,
        } => write!(
            f,
            "\"{output}\" cannot be written in place of \"{input}\": {reason}"
        ),
        BadOverlap {
            output,
            input,
            reason,
        } => write!(
            f,
            "\"{output}\" cannot be written over \"{input}\": {reason}"
        ),
        // Only those two come here (see `fmt`).
        other => fmt::Debug::fmt(other, f),
    }
}
