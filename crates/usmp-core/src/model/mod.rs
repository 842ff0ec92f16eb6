//! A model as the RFC's AoT "main" function sees it: operator calls in execution order,
//! the tensors they read and write, the scratch they allocate inside themselves, and the
//! model's inputs and outputs. [`liveness`](crate::liveness) turns it into a planning
//! [`Problem`](crate::Problem).
//!
//! A model is plain data, built by a reader (the JSON IR in [`input`](crate::input), or
//! [`tflite`](crate::tflite)) or by hand; [`Model::check`] says whether it is a program
//! that can run.

mod error;
mod overlap;

pub use error::{CallField, ModelError, ModelErrorKind, ModelLocus, TensorField};
pub use overlap::Overlap;

/// How many bytes a tensor or scratch allocation needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// Known at compile time.
    Bytes(u64),
    /// Only known at run time: left out of the static plan and listed in the report
    /// (RFC goal G1).
    Dynamic,
}

impl Size {
    /// The size in bytes, if static.
    pub fn bytes(self) -> Option<u64> {
        match self {
            Size::Bytes(b) => Some(b),
            Size::Dynamic => None,
        }
    }
}

/// What a tensor is, which decides where it may go and how long it lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// Produced by one call (or given as a model input) and read by later calls.
    Activation,
    /// Read-only data, placed only in constant pools.
    Constant(Vec<u8>),
    /// Persistent state (LSTM/SVDF memory): lives for the whole program, never shared.
    State,
}

/// One tensor of the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tensor {
    /// Its name; the JSON IR requires names to be unique, `.tflite` files do not.
    pub name: String,
    /// Its size.
    pub size: Size,
    /// Its alignment in bytes; `None` takes the planning default.
    pub alignment: Option<u64>,
    /// What it is.
    pub role: Role,
    /// Bytes read and written in it per inference, when known better than its size
    /// times the reads and writes of the calls (a kernel may read an input many times).
    pub traffic: Option<u64>,
}

impl Tensor {
    /// An activation of `bytes` bytes.
    pub fn activation(name: impl Into<String>, bytes: u64) -> Self {
        Tensor {
            name: name.into(),
            size: Size::Bytes(bytes),
            alignment: None,
            role: Role::Activation,
            traffic: None,
        }
    }

    /// A constant holding `data`.
    pub fn constant(name: impl Into<String>, data: Vec<u8>) -> Self {
        Tensor {
            name: name.into(),
            size: Size::Bytes(data.len() as u64),
            alignment: None,
            role: Role::Constant(data),
            traffic: None,
        }
    }

    /// Persistent state of `bytes` bytes.
    pub fn state(name: impl Into<String>, bytes: u64) -> Self {
        Tensor {
            role: Role::State,
            ..Tensor::activation(name, bytes)
        }
    }
}

/// Memory an operator allocates for itself during one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scratch {
    /// Its name, unique within the call.
    pub name: String,
    /// Its size.
    pub size: Size,
    /// Its alignment in bytes; `None` takes the planning default.
    pub alignment: Option<u64>,
}

/// An output written into the memory of an input that dies at this call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InPlace {
    /// The tensor written (index into [`Model::tensors`]).
    pub output: usize,
    /// The tensor whose memory it reuses.
    pub input: usize,
}

/// One operator call of the program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The operator, e.g. `CONV_2D`.
    pub op: String,
    /// What runs it, e.g. `cpu` or `npu`; decides which pools its buffers may use.
    pub target: String,
    /// Tensors read, as indices into [`Model::tensors`].
    pub reads: Vec<usize>,
    /// Tensors written.
    pub writes: Vec<usize>,
    /// Intra-operator allocations, live during this call only.
    pub scratch: Vec<Scratch>,
    /// Outputs that reuse a dying input's memory.
    pub in_place: Vec<InPlace>,
    /// Outputs that may be written over a dying input, within a window.
    pub overlaps: Vec<Overlap>,
}

impl Call {
    /// A call of `op` on `target` with no tensors yet.
    pub fn new(op: impl Into<String>, target: impl Into<String>) -> Self {
        Call {
            op: op.into(),
            target: target.into(),
            reads: Vec::new(),
            writes: Vec::new(),
            scratch: Vec::new(),
            in_place: Vec::new(),
            overlaps: Vec::new(),
        }
    }
}

/// A whole program: what runs, in order, on which data.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Model {
    /// The model's name.
    pub name: String,
    /// Every tensor.
    pub tensors: Vec<Tensor>,
    /// Operator calls in execution order.
    pub calls: Vec<Call>,
    /// The model's inputs, given by the caller before the first call.
    pub inputs: Vec<usize>,
    /// The model's outputs, read by the caller after the last call.
    pub outputs: Vec<usize>,
}

impl Model {
    /// Which call writes each tensor, if any.
    pub fn producers(&self) -> Vec<Option<usize>> {
        let mut producer = vec![None; self.tensors.len()];
        for (i, call) in self.calls.iter().enumerate() {
            for &t in &call.writes {
                if let Some(slot) = producer.get_mut(t) {
                    slot.get_or_insert(i);
                }
            }
        }
        producer
    }

    /// The last call that reads each tensor, if any.
    pub fn last_readers(&self) -> Vec<Option<usize>> {
        let mut last = vec![None; self.tensors.len()];
        for (i, call) in self.calls.iter().enumerate() {
            for &t in &call.reads {
                if let Some(slot) = last.get_mut(t) {
                    *slot = Some(i);
                }
            }
        }
        last
    }

    /// Checks that the model is a program that can run: every index names a tensor,
    /// activations are written once and before they are read, constants and inputs are
    /// never written, alignments are powers of two, and in-place outputs reuse an input
    /// that dies at that call. Returns the first problem found; [`problems`](Self::problems)
    /// lists them all.
    pub fn check(&self) -> Result<(), ModelError> {
        match self.problems().into_iter().next() {
            Some(first) => Err(first),
            None => Ok(()),
        }
    }

    /// Every problem [`check`](Self::check) looks for, in model order: tensors, the
    /// input and output lists, then call by call, then the outputs and in-place uses.
    pub fn problems(&self) -> Vec<ModelError> {
        let n = self.tensors.len();
        let mut found = Vec::new();
        let mut err = |locus, kind| found.push(ModelError { locus, kind });
        for e in self.list_problems() {
            err(e.locus, e.kind);
        }
        let mut written: Vec<Option<usize>> = vec![None; n];
        let is_input = |t: usize| self.inputs.contains(&t);
        for (i, call) in self.calls.iter().enumerate() {
            let here = |field| ModelLocus::Call(i, field);
            for (k, &t) in call.reads.iter().enumerate() {
                let Some(tensor) = self.tensors.get(t) else {
                    err(
                        here(CallField::Read(k)),
                        ModelErrorKind::NoSuchTensor { index: t },
                    );
                    continue;
                };
                if tensor.role == Role::Activation && written[t].is_none() && !is_input(t) {
                    err(
                        here(CallField::Read(k)),
                        ModelErrorKind::ReadBeforeWritten {
                            tensor: tensor.name.clone(),
                            call: self.describe_call(i),
                        },
                    );
                }
            }
            for (k, &t) in call.writes.iter().enumerate() {
                if t >= n {
                    err(
                        here(CallField::Write(k)),
                        ModelErrorKind::NoSuchTensor { index: t },
                    );
                    continue;
                }
                if let Some(kind) = self.write_problem(i, t, written[t]) {
                    err(here(CallField::Write(k)), kind);
                }
                written[t].get_or_insert(i);
            }
            for e in self.scratch_problems(i) {
                err(e.locus, e.kind);
            }
        }
        for (k, &t) in self.outputs.iter().enumerate() {
            let Some(tensor) = self.tensors.get(t) else {
                continue;
            };
            if tensor.role == Role::Activation && written[t].is_none() && !is_input(t) {
                err(
                    ModelLocus::Output(k),
                    ModelErrorKind::OutputNeverWritten {
                        tensor: tensor.name.clone(),
                    },
                );
            }
        }
        found.extend(self.in_place_problems());
        found.extend(overlap::problems(self));
        found
    }

    /// The tensors' alignments and the input and output lists' indices.
    fn list_problems(&self) -> Vec<ModelError> {
        let n = self.tensors.len();
        let mut found = Vec::new();
        let mut err = |locus, kind| found.push(ModelError { locus, kind });
        for (t, tensor) in self.tensors.iter().enumerate() {
            if let Some(a) = tensor.alignment
                && !a.is_power_of_two()
            {
                err(
                    ModelLocus::Tensor(t, TensorField::Alignment),
                    ModelErrorKind::BadAlignment {
                        what: format!("tensor \"{}\"", tensor.name),
                        alignment: a,
                    },
                );
            }
        }
        let lists = [(&self.inputs, true), (&self.outputs, false)];
        for (list, is_input) in lists {
            for (k, &t) in list.iter().enumerate() {
                if t >= n {
                    let locus = if is_input {
                        ModelLocus::Input(k)
                    } else {
                        ModelLocus::Output(k)
                    };
                    err(locus, ModelErrorKind::NoSuchTensor { index: t });
                }
            }
        }
        found
    }

    /// What is wrong with call `i` writing tensor `t` (in range), which `first_writer`
    /// wrote before, if anything.
    fn write_problem(
        &self,
        i: usize,
        t: usize,
        first_writer: Option<usize>,
    ) -> Option<ModelErrorKind> {
        let tensor = &self.tensors[t];
        let is_input = |t: usize| self.inputs.contains(&t);
        match (&tensor.role, first_writer) {
            (Role::Constant(_), _) => Some(ModelErrorKind::WritesConstant {
                tensor: tensor.name.clone(),
                call: self.describe_call(i),
            }),
            (Role::Activation, Some(first)) => Some(ModelErrorKind::WrittenTwice {
                tensor: tensor.name.clone(),
                first: self.describe_call(first),
                second: self.describe_call(i),
            }),
            (Role::Activation, None) if is_input(t) => Some(ModelErrorKind::WritesInput {
                tensor: tensor.name.clone(),
                call: self.describe_call(i),
            }),
            (Role::Activation, None) if self.calls[i].reads.contains(&t) => {
                Some(ModelErrorKind::ReadBeforeWritten {
                    tensor: tensor.name.clone(),
                    call: self.describe_call(i),
                })
            }
            _ => None,
        }
    }

    /// Call `i`'s scratch: alignments that are powers of two, names used once.
    fn scratch_problems(&self, i: usize) -> Vec<ModelError> {
        let call = &self.calls[i];
        let here = |field| ModelLocus::Call(i, field);
        let mut found = Vec::new();
        let mut err = |locus, kind| found.push(ModelError { locus, kind });
        for (k, s) in call.scratch.iter().enumerate() {
            if let Some(a) = s.alignment
                && !a.is_power_of_two()
            {
                err(
                    here(CallField::Scratch(k)),
                    ModelErrorKind::BadAlignment {
                        what: format!("scratch \"{}\" of {}", s.name, self.describe_call(i)),
                        alignment: a,
                    },
                );
            }
            if call.scratch[..k].iter().any(|o| o.name == s.name) {
                err(
                    here(CallField::Scratch(k)),
                    ModelErrorKind::DuplicateScratch {
                        name: s.name.clone(),
                        call: self.describe_call(i),
                    },
                );
            }
        }
        found
    }

    /// Why call `i` cannot give tensor `output` memory of tensor `input`, by the rules that
    /// writing in place and writing over share: the call writes the one and reads the
    /// other for the last time, both activations of known size. `Err` when either index
    /// names no tensor.
    pub(crate) fn sharing_problem(
        &self,
        i: usize,
        last: &[Option<usize>],
        output: usize,
        input: usize,
    ) -> Result<Option<String>, ModelErrorKind> {
        let (Some(out), Some(inp)) = (self.tensors.get(output), self.tensors.get(input)) else {
            let index = output.max(input);
            return Err(ModelErrorKind::NoSuchTensor { index });
        };
        let call = &self.calls[i];
        Ok(if !call.writes.contains(&output) {
            Some(format!("this call does not write \"{}\"", out.name))
        } else if !call.reads.contains(&input) {
            Some(format!("this call does not read \"{}\"", inp.name))
        } else if out.role != Role::Activation || inp.role != Role::Activation {
            Some("only activations can share memory; constants and state cannot".into())
        } else if last[input] != Some(i) || self.outputs.contains(&input) {
            Some(format!("\"{}\" is still needed after this call", inp.name))
        } else if out.size == Size::Dynamic || inp.size == Size::Dynamic {
            Some("dynamically sized tensors are not planned".into())
        } else {
            None
        })
    }

    fn in_place_problems(&self) -> Vec<ModelError> {
        let mut found = Vec::new();
        let last = self.last_readers();
        let mut reused = vec![false; self.tensors.len()];
        let mut taken = vec![false; self.tensors.len()];
        for (i, call) in self.calls.iter().enumerate() {
            for (k, ip) in call.in_place.iter().enumerate() {
                let locus = ModelLocus::Call(i, CallField::InPlace(k));
                let why = match self.sharing_problem(i, &last, ip.output, ip.input) {
                    Err(kind) => {
                        found.push(ModelError { locus, kind });
                        continue;
                    }
                    Ok(why) => why,
                };
                let (out, inp) = (&self.tensors[ip.output], &self.tensors[ip.input]);
                let why = if why.is_some() {
                    why
                } else if self.inputs.contains(&ip.input) || self.outputs.contains(&ip.output) {
                    Some("model inputs and outputs cannot share memory".into())
                } else if std::mem::replace(&mut reused[ip.input], true) {
                    Some(format!(
                        "\"{}\" is already reused by another output",
                        inp.name
                    ))
                } else if std::mem::replace(&mut taken[ip.output], true) {
                    Some(format!(
                        "\"{}\" already takes another input's memory; an output can reuse one input only",
                        out.name
                    ))
                } else {
                    None
                };
                if let Some(reason) = why {
                    found.push(ModelError {
                        locus,
                        kind: ModelErrorKind::BadInPlace {
                            output: out.name.clone(),
                            input: inp.name.clone(),
                            reason,
                        },
                    });
                }
            }
        }
        found
    }

    /// `call 3 (CONV_2D)`: how messages and reports name a call.
    pub fn describe_call(&self, i: usize) -> String {
        match self.calls.get(i) {
            Some(c) => format!("call {i} ({})", c.op),
            None => format!("call {i}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// in -> relu -> a -> add(a, w) -> out
    fn small() -> Model {
        let mut relu = Call::new("RELU", "cpu");
        relu.reads = vec![0];
        relu.writes = vec![1];
        let mut add = Call::new("ADD", "cpu");
        add.reads = vec![1, 2];
        add.writes = vec![3];
        Model {
            name: "small".into(),
            tensors: vec![
                Tensor::activation("in", 16),
                Tensor::activation("a", 16),
                Tensor::constant("w", vec![1; 16]),
                Tensor::activation("out", 16),
            ],
            calls: vec![relu, add],
            inputs: vec![0],
            outputs: vec![3],
        }
    }

    fn kind(m: &Model) -> ModelErrorKind {
        m.check().unwrap_err().kind
    }

    #[test]
    fn a_well_formed_model_passes() {
        small().check().unwrap();
        assert_eq!(small().producers(), vec![None, Some(0), None, Some(1)]);
        assert_eq!(
            small().last_readers(),
            vec![Some(0), Some(1), Some(1), None]
        );
    }

    #[test]
    fn each_malformation_is_named() {
        let mut m = small();
        m.calls.swap(0, 1);
        assert!(
            matches!(kind(&m), ModelErrorKind::ReadBeforeWritten { tensor, .. } if tensor == "a")
        );
        let mut m = small();
        m.calls[1].writes.push(1);
        assert!(matches!(kind(&m), ModelErrorKind::WrittenTwice { tensor, .. } if tensor == "a"));
        let mut m = small();
        m.calls[1].writes.push(2);
        assert!(matches!(kind(&m), ModelErrorKind::WritesConstant { .. }));
        let mut m = small();
        m.calls[1].writes.push(0);
        assert!(matches!(kind(&m), ModelErrorKind::WritesInput { .. }));
        let mut m = small();
        m.calls[0].reads.push(9);
        let e = m.check().unwrap_err();
        assert_eq!(e.locus, ModelLocus::Call(0, CallField::Read(1)));
        let mut m = small();
        m.tensors[1].alignment = Some(12);
        assert!(matches!(
            kind(&m),
            ModelErrorKind::BadAlignment { alignment: 12, .. }
        ));
        let mut m = small();
        m.calls[1].writes.clear();
        assert!(matches!(
            kind(&m),
            ModelErrorKind::OutputNeverWritten { .. }
        ));
    }

    #[test]
    fn an_output_reuses_one_input_only() {
        let mut split = Call::new("SPLIT", "cpu");
        split.reads = vec![0];
        split.writes = vec![1, 2];
        let mut add = Call::new("ADD", "cpu");
        add.reads = vec![1, 2];
        add.writes = vec![3];
        for input in [1, 2] {
            add.in_place.push(InPlace { output: 3, input });
        }
        let mut tail = Call::new("RELU", "cpu");
        tail.reads = vec![3];
        tail.writes = vec![4];
        let m = Model {
            name: "twice".into(),
            tensors: ["in", "a", "b", "c", "out"]
                .map(|n| Tensor::activation(n, 16))
                .to_vec(),
            calls: vec![split, add, tail],
            inputs: vec![0],
            outputs: vec![4],
        };
        let e = kind(&m);
        assert!(
            matches!(&e, ModelErrorKind::BadInPlace { reason, .. } if reason.contains("\"c\" already takes another input's memory")),
            "{e}"
        );
    }

    #[test]
    fn in_place_needs_a_dying_input() {
        let mut m = small();
        m.calls[1].in_place.push(InPlace {
            output: 3,
            input: 1,
        });
        // "out" is a model output: it cannot share with an activation.
        assert!(matches!(kind(&m), ModelErrorKind::BadInPlace { .. }));
        let mut m = small();
        m.tensors.push(Tensor::activation("b", 16));
        m.calls[0].writes.push(4);
        m.calls[1].reads.push(4);
        let mut tail = Call::new("RELU", "cpu");
        tail.reads = vec![1];
        tail.writes = vec![];
        m.calls.push(tail);
        m.calls[1].in_place.push(InPlace {
            output: 3,
            input: 1,
        });
        let e = kind(&m);
        assert!(
            matches!(&e, ModelErrorKind::BadInPlace { reason, .. } if reason.contains("still needed")),
            "{e}"
        );
    }
}
