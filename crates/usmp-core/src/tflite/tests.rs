//! Reader tests on small models built here, field by field, so every failure the reader
//! must name can be produced exactly. The real models are read in tests/tflite_models.rs.

use super::*;

/// A FlatBuffers object to serialise.
#[derive(Clone)]
enum Obj {
    /// Fields by slot; `None` leaves a slot absent.
    Table(Vec<Option<Field>>),
    Ints(Vec<i32>),
    Bytes(Vec<u8>),
    Tables(Vec<Obj>),
}

#[derive(Clone)]
enum Field {
    Byte(u8),
    Word(u32),
    Ref(Obj),
}

/// Writes parents before children so every offset points forward, as the format needs.
fn write(buf: &mut Vec<u8>, obj: &Obj) -> usize {
    match obj {
        Obj::Table(fields) => {
            let vtable = buf.len();
            buf.extend(((4 + 2 * fields.len()) as u16).to_le_bytes());
            buf.extend(((4 + 4 * fields.len()) as u16).to_le_bytes());
            for (k, f) in fields.iter().enumerate() {
                let off = if f.is_some() { 4 + 4 * k as u16 } else { 0 };
                buf.extend(off.to_le_bytes());
            }
            let table = buf.len();
            buf.extend(((table - vtable) as i32).to_le_bytes());
            let mut refs = Vec::new();
            for f in fields {
                let at = buf.len();
                match f {
                    Some(Field::Byte(b)) => buf.extend([*b, 0, 0, 0]),
                    Some(Field::Word(w)) => buf.extend(w.to_le_bytes()),
                    Some(Field::Ref(o)) => {
                        buf.extend([0; 4]);
                        refs.push((at, o));
                    }
                    None => buf.extend([0; 4]),
                }
            }
            for (at, o) in refs {
                let to = write(buf, o);
                buf[at..at + 4].copy_from_slice(&((to - at) as u32).to_le_bytes());
            }
            table
        }
        Obj::Ints(v) => {
            let at = buf.len();
            buf.extend((v.len() as u32).to_le_bytes());
            v.iter().for_each(|i| buf.extend(i.to_le_bytes()));
            at
        }
        Obj::Bytes(v) => {
            let at = buf.len();
            buf.extend((v.len() as u32).to_le_bytes());
            buf.extend(v);
            at
        }
        Obj::Tables(items) => {
            let at = buf.len();
            buf.extend((items.len() as u32).to_le_bytes());
            let slots: Vec<usize> = (0..items.len()).map(|k| at + 4 + 4 * k).collect();
            buf.extend(vec![0; 4 * items.len()]);
            for (slot, item) in slots.into_iter().zip(items) {
                let to = write(buf, item);
                buf[slot..slot + 4].copy_from_slice(&((to - slot) as u32).to_le_bytes());
            }
            at
        }
    }
}

fn file(model: &Obj) -> Vec<u8> {
    let mut buf = vec![0, 0, 0, 0];
    buf.extend(*b"TFL3");
    let root = write(&mut buf, model);
    buf[0..4].copy_from_slice(&(root as u32).to_le_bytes());
    buf
}

fn s(text: &str) -> Option<Field> {
    Some(Field::Ref(Obj::Bytes(text.as_bytes().to_vec())))
}

fn ints(v: &[i32]) -> Option<Field> {
    Some(Field::Ref(Obj::Ints(v.to_vec())))
}

struct T<'a> {
    name: &'a str,
    shape: &'a [i32],
    ty: u8,
    buffer: u32,
    variable: bool,
}

fn tensor(t: &T<'_>) -> Obj {
    Obj::Table(vec![
        ints(t.shape),
        Some(Field::Byte(t.ty)),
        Some(Field::Word(t.buffer)),
        s(t.name),
        None,
        Some(Field::Byte(u8::from(t.variable))),
    ])
}

fn op(code: u32, inputs: &[i32], outputs: &[i32]) -> Obj {
    Obj::Table(vec![Some(Field::Word(code)), ints(inputs), ints(outputs)])
}

/// x[1,8] int8 -> FULLY_CONNECTED(w, -1 bias) -> y[1,4] -> code-1 op -> z[1,4] int8
fn model(tensors: &[T<'_>], op_code: u32, second: i32) -> Vec<u8> {
    model_with_metadata(tensors, op_code, second, None)
}

/// [`model`] with a `metadata` vector (slot 6), whose buffer indices may use buffer 1.
fn model_with_metadata(
    tensors: &[T<'_>],
    op_code: u32,
    second: i32,
    metadata: Option<Obj>,
) -> Vec<u8> {
    model_with_subgraphs(tensors, op_code, second, metadata, 1)
}

/// [`model_with_metadata`] with `subgraphs` copies of its subgraph.
fn model_with_subgraphs(
    tensors: &[T<'_>],
    op_code: u32,
    second: i32,
    metadata: Option<Obj>,
    subgraphs: usize,
) -> Vec<u8> {
    model_with_options(tensors, op_code, second, metadata, subgraphs, None)
}

/// [`model_with_subgraphs`] whose second operator has builtin `options`.
fn model_with_options(
    tensors: &[T<'_>],
    op_code: u32,
    second: i32,
    metadata: Option<Obj>,
    subgraphs: usize,
    options: Option<Obj>,
) -> Vec<u8> {
    let codes = Obj::Tables(vec![
        Obj::Table(vec![Some(Field::Byte(9)), None, None, Some(Field::Word(9))]),
        Obj::Table(vec![
            Some(Field::Byte(op_code.min(127) as u8)),
            s("MyOp"),
            None,
            Some(Field::Word(op_code)),
        ]),
    ]);
    let subgraph = Obj::Table(vec![
        Some(Field::Ref(Obj::Tables(
            tensors.iter().map(tensor).collect(),
        ))),
        ints(&[0]),
        ints(&[3]),
        Some(Field::Ref(Obj::Tables(vec![
            op(0, &[0, 1, -1], &[2]),
            Obj::Table(vec![
                Some(Field::Word(1)),
                ints(&[2, second]),
                ints(&[3]),
                None,
                options.map(Field::Ref),
            ]),
        ]))),
    ]);
    let buffers = Obj::Tables(vec![
        Obj::Table(vec![]),
        Obj::Table(vec![Some(Field::Ref(Obj::Bytes((0..32).collect())))]),
    ]);
    file(&Obj::Table(vec![
        Some(Field::Word(3)),
        Some(Field::Ref(codes)),
        Some(Field::Ref(Obj::Tables(vec![subgraph; subgraphs]))),
        None,
        Some(Field::Ref(buffers)),
        None,
        metadata.map(Field::Ref),
    ]))
}

fn good_tensors() -> Vec<T<'static>> {
    let t = |name, shape, ty, buffer, variable| T {
        name,
        shape,
        ty,
        buffer,
        variable,
    };
    vec![
        t("x", &[1, 8], 9, 0, false),
        t("w", &[4, 8], 9, 1, false),
        t("y", &[1, 4], 9, 0, false),
        t("z", &[1, 4], 0, 0, false),
        t("h", &[1, 5], 7, 0, true),
    ]
}

#[test]
fn reads_a_small_model() {
    let m = read_tflite(&model(&good_tensors(), 14, 4), "small").unwrap();
    assert_eq!(m.name, "small");
    let ops: Vec<&str> = m.calls.iter().map(|c| c.op.as_str()).collect();
    assert_eq!(ops, vec!["FULLY_CONNECTED", "LOGISTIC"]);
    assert_eq!(
        m.calls[0].reads,
        vec![0, 1],
        "the optional -1 input is skipped"
    );
    assert_eq!(m.calls[1].writes, vec![3]);
    assert_eq!((m.inputs.clone(), m.outputs.clone()), (vec![0], vec![3]));
    assert_eq!(m.tensors[0].size, Size::Bytes(8));
    assert_eq!(m.tensors[1].role, Role::Constant((0..32).collect()));
    assert_eq!(m.tensors[3].size, Size::Bytes(16), "4 float32");
    assert_eq!(
        (m.tensors[4].role.clone(), m.tensors[4].size),
        (Role::State, Size::Bytes(10))
    );
    m.check().unwrap();
    // Bytes read and written per inference: the fully connected layer reads x once per
    // unit (4 x 8) and w once (1 batch); y is written once and read by LOGISTIC once, as
    // is the state h it also names.
    let traffic: Vec<_> = m.tensors.iter().map(|t| t.traffic).collect();
    assert_eq!(traffic, [Some(32), Some(32), Some(8), Some(16), Some(10)]);
}

/// A pooling reads its input under every window (taps in the padding are not read), and
/// a padding the schema does not have is refused, naming the operator.
#[test]
fn a_window_s_traffic_comes_from_its_options() {
    let mut ts = good_tensors();
    // y[1,4] read as a 1x2x2x1 image by MAX_POOL_2D (code 17) into z[1,1,1,1] float32:
    // SAME, stride 2, window 2x2: one window over all four values.
    ts[2].shape = &[1, 2, 2, 1];
    ts[3].shape = &[1, 1, 1, 1];
    let pool = |padding: u8| {
        Obj::Table(vec![
            Some(Field::Byte(padding)),
            Some(Field::Word(2)),
            Some(Field::Word(2)),
            Some(Field::Word(2)),
            Some(Field::Word(2)),
        ])
    };
    let m = read_tflite(&model_with_options(&ts, 17, 4, None, 1, Some(pool(0))), "m").unwrap();
    assert_eq!(m.tensors[2].traffic, Some(4 + 4), "written once, read once");
    assert_eq!(m.tensors[3].traffic, Some(4));
    // A 3x3 window (SAME, stride 2) over 2x2 pads one row and column after: still 4 taps.
    let mut three = pool(0);
    if let Obj::Table(fields) = &mut three {
        fields[3] = Some(Field::Word(3));
        fields[4] = Some(Field::Word(3));
    }
    let m = read_tflite(&model_with_options(&ts, 17, 4, None, 1, Some(three)), "m").unwrap();
    assert_eq!(m.tensors[2].traffic, Some(4 + 4));
    assert_eq!(
        error(&model_with_options(&ts, 17, 4, None, 1, Some(pool(7)))),
        "the options of operator 1 (MAX_POOL_2D, slot 0): padding 7 is neither SAME (0) nor \
         VALID (1) (the file is corrupt)"
    );
}

#[test]
fn codes_above_127_and_custom_operators_are_named() {
    let m = read_tflite(&model(&good_tensors(), 150, 4), "m").unwrap();
    assert_eq!(m.calls[1].op, "GELU");
    let m = read_tflite(&model(&good_tensors(), 32, 4), "m").unwrap();
    assert_eq!(m.calls[1].op, "MyOp");
}

fn error(bytes: &[u8]) -> String {
    read_tflite(bytes, "m").unwrap_err().to_string()
}

#[test]
fn what_cannot_be_planned_is_named() {
    let mut ts = good_tensors();
    ts[2].shape = &[-1, 4];
    assert_eq!(
        error(&model(&ts, 14, 4)),
        "tensor 2 \"y\": shape [-1, 4] has a dynamic dimension (-1); static planning needs \
         every dimension known (fix the shape when converting the model)"
    );
    let mut ts = good_tensors();
    ts[2].ty = 5;
    assert!(
        error(&model(&ts, 14, 4))
            .starts_with("tensor 2 \"y\": element type STRING has no fixed size"),
        "{}",
        error(&model(&ts, 14, 4))
    );
    assert!(
        error(&model(&good_tensors(), 119, 4)).starts_with("operator 1 (WHILE): control flow"),
        "{}",
        error(&model(&good_tensors(), 119, 4))
    );
    assert_eq!(
        error(&model(&good_tensors(), 14, 7)),
        "operator 1 (LOGISTIC): tensor index 7 is out of range (the subgraph has 5) (the \
         file is corrupt)"
    );
    let mut ts = good_tensors();
    ts[3].buffer = 9;
    assert_eq!(
        error(&model(&ts, 14, 4)),
        "tensor 3 \"z\": buffer index 9 is out of range (the file is corrupt)"
    );
}

#[test]
fn wrong_or_broken_files_are_errors() {
    assert!(error(b"hello").starts_with("not a TensorFlow Lite model"));
    assert!(error(b"\0\0\0\0TFL2....").contains("found \"TFL2\""));
    let good = model(&good_tensors(), 14, 4);
    // The constant's bytes are written last, so every prefix loses something the reader
    // needs: each must fail with an error.
    for cut in 0..good.len() {
        assert!(read_tflite(&good[..cut], "m").is_err(), "cut at {cut}");
    }
    assert!(error(&good[..good.len() / 2]).contains("corrupt"));
}

#[test]
fn the_graph_keeps_left_out_inputs_and_reads_absent_options_as_defaults() {
    let bytes = model(&good_tensors(), 14, 4);
    let g = read_graph(&bytes).unwrap();
    assert_eq!(g.operators[0].inputs, [Some(0), Some(1), None]);
    assert_eq!(g.operators[1].outputs, [3]);
    assert_eq!(g.tensors[1].shape, [4, 8]);
    assert!(g.tensors[1].constant && !g.tensors[0].constant);
    assert_eq!(g.tensors[3].element, usmp::ElementType::Float32);
    assert!(g.tensors[0].quantization.scales.is_empty());
    // No options table: the schema's defaults.
    assert_eq!(
        g.operators[0].options,
        usmp::Options::FullyConnected {
            activation: usmp::Activation::None,
            keep_num_dims: false,
        }
    );
    assert_eq!(
        g.operators[1].options,
        usmp::Options::None,
        "LOGISTIC has none"
    );
    assert!(matches!(
        read_graph(b"nope nope"),
        Err(TfliteError::NotTflite { .. })
    ));
}

mod offline_plan {
    use super::*;
    use crate::algo::FirstFit;
    use crate::liveness::{CallSelector, ScratchRule};
    use crate::model::Scratch;

    fn planned(bytes: &[u8], scratch: &[ScratchRule]) -> TflmPlan {
        plan_for_tflm(bytes, "m", &FirstFit, scratch).unwrap()
    }

    #[test]
    fn the_copy_holds_the_plan_and_the_original_byte_for_byte() {
        let original = model(&good_tensors(), 14, 4);
        let p = planned(&original, &[]);
        let copy = &p.written.bytes;
        assert!(!p.written.replaced);
        assert!(
            copy.ends_with(&original),
            "the original follows the new prefix"
        );
        assert_eq!((copy.len() - original.len()) % 16, 0, "alignments kept");
        assert_eq!(
            read_tflite(copy, "m").unwrap(),
            read_tflite(&original, "m").unwrap()
        );
        let back = read_offline_plan(copy).unwrap().unwrap();
        assert_eq!(back, p.offline);
        assert_eq!(back.subgraphs, 1);
        // x, y, z are planned at multiples of 16; the constant w and the variable h are
        // left to TFLite Micro (-1).
        let o = &back.offsets;
        assert_eq!(o.len(), 5);
        assert_eq!((o[1], o[4]), (-1, -1));
        assert!(o[0] >= 0 && o[2] >= 0 && o[3] >= 0, "{o:?}");
        assert!(o.iter().all(|&x| x == -1 || x % 16 == 0), "{o:?}");
        // x and y are live together (call 0), y and z too (call 1): disjoint places.
        assert_ne!(o[0], o[2]);
        assert_ne!(o[2], o[3]);
        assert_eq!(p.head, 32, "x and y, then y and z: 16 bytes each");
        assert_eq!(p.tensors_head(), 32);
        assert_eq!(p.planned(), 3);
        assert_eq!(read_offline_plan(&original).unwrap(), None);
    }

    #[test]
    fn a_plan_already_there_is_replaced_and_other_metadata_kept() {
        let other = Obj::Tables(vec![Obj::Table(vec![
            s("min_runtime_version"),
            Some(Field::Word(1)),
        ])]);
        let original = model_with_metadata(&good_tensors(), 14, 4, Some(other));
        let once = planned(&original, &[]).written;
        let twice = planned(&once.bytes, &[]).written;
        assert!(twice.replaced);
        let root = Table::root(&twice.bytes).unwrap();
        let names: Vec<String> = {
            let list = root.vector(6).unwrap().unwrap();
            (0..list.len())
                .map(|k| list.table(k).unwrap().string(0).unwrap().unwrap())
                .collect()
        };
        assert_eq!(names, ["min_runtime_version", OFFLINE_PLAN_METADATA]);
        assert_eq!(
            read_offline_plan(&twice.bytes).unwrap(),
            read_offline_plan(&once.bytes).unwrap()
        );
    }

    #[test]
    fn other_subgraphs_are_left_to_tflite_micro() {
        let original = model_with_subgraphs(&good_tensors(), 14, 4, None, 3);
        let p = planned(&original, &[]);
        let back = read_offline_plan(&p.written.bytes).unwrap().unwrap();
        assert_eq!(back.subgraphs, 3);
        assert_eq!(
            back.offsets.len(),
            15,
            "five tensors in each of three subgraphs"
        );
        assert_eq!(&back.offsets[..5], &p.offline.offsets[..5]);
        assert_eq!(back.offsets.iter().filter(|&&o| o >= 0).count(), 3);
        assert!(back.offsets[5..].iter().all(|&o| o == -1));
    }

    #[test]
    fn scratch_gets_room_and_its_place_is_replayed() {
        let original = model(&good_tensors(), 14, 4);
        let rule = |call, bytes| ScratchRule {
            calls: CallSelector::Index(call),
            scratch: Scratch {
                name: format!("s{call}"),
                size: Size::Bytes(bytes),
                alignment: None,
            },
        };
        // 40 bytes of scratch during call 1, next to y and z: 16 + 16 + 48.
        let p = planned(&original, &[rule(1, 40)]);
        assert_eq!(p.head, 80);
        assert_eq!(p.plan.pool_sizes[0], 80);
        // Without the rule the tensors need 32 bytes, and TFLite Micro would add the
        // scratch on top at run time.
        assert_eq!(planned(&original, &[]).head, 32);
    }

    #[test]
    fn broken_or_foreign_files_are_errors_never_panics() {
        let good = planned(&model(&good_tensors(), 14, 4), &[]).written.bytes;
        assert!(matches!(
            plan_for_tflm(b"{\"tensors\": []}", "m", &FirstFit, &[]),
            Err(TflmError::Tflite(TfliteError::NotTflite { .. }))
        ));
        for cut in 0..good.len() {
            let _ = read_offline_plan(&good[..cut]);
            assert!(
                plan_for_tflm(&good[..cut], "m", &FirstFit, &[]).is_err(),
                "cut {cut}"
            );
        }
        // A plan whose header claims more offsets than the buffer holds.
        let mut bad = good.clone();
        let at = find(&bad, &[1, 0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0]);
        bad[at + 8] = 6;
        assert!(
            read_offline_plan(&bad)
                .unwrap_err()
                .to_string()
                .contains("the header says 6 offsets follow, the buffer holds 5"),
            "{:?}",
            read_offline_plan(&bad)
        );
    }

    fn find(hay: &[u8], needle: &[u8]) -> usize {
        hay.windows(needle.len()).position(|w| w == needle).unwrap()
    }
}
