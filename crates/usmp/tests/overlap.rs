//! An output written over the input it is the last reader of ([`Source::Over`]): the
//! session hands out the two as one region, poisoning spares the output's bytes, and
//! `check` accepts exactly the declared pair. Run under Miri too.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use usmp::{
    Buffer, Builtin, CallInfo, ModelInfo, Op, PoolInfo, PoolKind, Shared, Slot, Storage, TakeOnce,
    Violation, check,
};

#[repr(C, align(4))]
struct Align4<T>(T);

static RAM: Align4<Storage<32>> = Align4(Storage::new());
static ONCE: TakeOnce = TakeOnce::new();

const POOLS: &[PoolInfo<'static>] = &[PoolInfo {
    name: "ram",
    kind: PoolKind::Workspace,
    size: 32,
    alignment: 4,
    section: ".usmp.ram",
    loaded: false,
}];

struct Pools;

// SAFETY: pool 0 is RAM's 32 bytes, 4-aligned, private to this file and reached only here;
// ONCE is used for nothing else.
unsafe impl usmp::Pools for Pools {
    const POOLS: &'static [PoolInfo<'static>] = POOLS;
    fn base(pool: usize) -> *mut u8 {
        match pool {
            0 => RAM.0.base(),
            _ => core::ptr::null_mut(),
        }
    }
    fn once() -> &'static TakeOnce {
        &ONCE
    }
}

const A: u32 = 0;
const B: u32 = 1;
const C: u32 = 2;

/// Call 0 writes b eight bytes below a, its input, which it reads last; call 1 copies b
/// to c.
const INFO: ModelInfo<'static> = ModelInfo {
    name: "over",
    buffers: &[
        Buffer::new(0, 8, 16, 0, 1),  // a: the model input
        Buffer::new(0, 0, 16, 0, 2),  // b: over a's first 8 bytes
        Buffer::new(0, 16, 16, 1, 2), // c: the model output
    ],
    calls: &[
        CallInfo {
            op: Op::Builtin(Builtin::Relu),
            options: usmp::Options::None,
            inputs: &[Slot::over(A, 0, None)],
            outputs: &[Slot::buffer(B, None)],
            scratch: &[],
        },
        CallInfo {
            op: Op::Builtin(Builtin::Relu),
            options: usmp::Options::None,
            inputs: &[Slot::buffer(B, None)],
            outputs: &[Slot::buffer(C, None)],
            scratch: &[],
        },
    ],
    inputs: &[Slot::buffer(A, None)],
    outputs: &[Slot::buffer(C, None)],
    tensors: &[],
    live: &[B, A, B, C],
    live_from: &[0, 2, 4],
    constant_order: &[],
    images: &[0],
};

const _: () = if let Err(v) = check(POOLS, &INFO) {
    v.fail()
};

struct Net;

// SAFETY: INFO passes `check` (asserted above); it has no constant pool.
unsafe impl usmp::Model for Net {
    type Pools = Pools;
    const INFO: &'static ModelInfo<'static> = &INFO;
    fn constants(_: usize) -> &'static [u8] {
        &[]
    }
}

#[test]
fn the_pair_is_one_region_and_poison_spares_the_output() {
    let mut ws = usmp::Workspace::<Pools>::take().unwrap();
    let mut net = usmp::Session::<Net>::new(&mut ws);
    let input: Vec<u8> = (1..=16).collect();
    net.input(0).unwrap().copy_from_slice(&input);
    {
        let mut call = net.call(0).unwrap();
        assert_eq!(
            call.inputs.get(0),
            None,
            "the input is inside the output's region"
        );
        let shared = call.inputs.shared(0).unwrap();
        assert_eq!(
            shared,
            Shared {
                output: 0,
                input_at: 8,
                input_len: 16,
                output_at: 0,
                output_len: 16
            }
        );
        assert_eq!(shared.shift(), -8);
        let region = call.outputs.get_mut(0).unwrap();
        assert_eq!(
            region.len(),
            24,
            "a's and b's bytes, from b's start to a's end"
        );
        assert_eq!(&region[shared.input()], &input[..]);
        // Element i is read before output i, eight bytes below it, is written.
        for i in 0..16 {
            region[shared.output_at + i] = region[shared.input_at + i] * 2;
        }
    }
    net.poison_dead(0, 0xA5);
    {
        let mut call = net.call(1).unwrap();
        assert_eq!(call.inputs.shared(0), None);
        let b = call.inputs.get(0).unwrap();
        let doubled: Vec<u8> = input.iter().map(|x| x * 2).collect();
        assert_eq!(b, &doubled[..], "poison left the output's bytes alone");
        let c = call.outputs.next().unwrap().unwrap();
        assert!(
            c[..8].iter().all(|&x| x == 0xA5),
            "a's bytes past b were poisoned when a died"
        );
        c.copy_from_slice(b);
    }
    assert_eq!(net.output(0).unwrap()[15], 32);
}

#[test]
fn check_accepts_only_the_declared_pair() {
    let with = |buffers: &[Buffer], calls: &[CallInfo<'static>], live: &[u32]| {
        leak_info(ModelInfo {
            buffers: leak(buffers.to_vec()),
            calls: leak(calls.to_vec()),
            live: leak(live.to_vec()),
            ..INFO
        })
    };
    let plain = CallInfo {
        inputs: leak([Slot::buffer(A, None)]),
        ..INFO.calls[0]
    };
    // Undeclared: the same offsets are an overlap.
    let undeclared = with(INFO.buffers, &[plain, INFO.calls[1]], INFO.live);
    assert_eq!(
        check(POOLS, undeclared),
        Err(Violation::Overlap {
            call: 0,
            a: 1,
            b: 0
        })
    );
    // The input read again by call 1: both live then too, where nothing declares them.
    let mut buffers = INFO.buffers.to_vec();
    buffers[A as usize].end = 2;
    let reads_on = with(&buffers, INFO.calls, &[B, A, B, A, C]);
    let reads_on = leak_info(ModelInfo {
        live_from: &[0, 2, 5],
        ..*reads_on
    });
    assert!(check(POOLS, reads_on).is_err());
    // Declared, but apart with a gap: the union would hand out bytes of neither.
    let mut buffers = INFO.buffers.to_vec();
    buffers[A as usize].offset = 20;
    buffers[A as usize].size = 4;
    buffers[A as usize].len = 4;
    let gap = with(&buffers, INFO.calls, &[B, A, B, C]);
    assert_eq!(check(POOLS, gap), Err(Violation::Slot { call: 0 }));
    // Declared twice for one output, or over an output that is not a buffer.
    let twice = CallInfo {
        inputs: leak([Slot::over(A, 0, None), Slot::over(A, 0, None)]),
        ..INFO.calls[0]
    };
    let twice = with(INFO.buffers, &[twice, INFO.calls[1]], INFO.live);
    assert_eq!(check(POOLS, twice), Err(Violation::Slot { call: 0 }));
    let no_output = CallInfo {
        inputs: leak([Slot::over(A, 1, None)]),
        ..INFO.calls[0]
    };
    let no_output = with(INFO.buffers, &[no_output, INFO.calls[1]], INFO.live);
    assert!(check(POOLS, no_output).is_err());
    // Among the model's outputs, a pair means nothing.
    let outputs = leak_info(ModelInfo {
        outputs: leak([Slot::over(C, 0, None)]),
        ..INFO
    });
    assert_eq!(
        check(POOLS, outputs),
        Err(Violation::Slot { call: usize::MAX })
    );
}

fn leak<T>(v: impl Into<Vec<T>>) -> &'static [T] {
    Vec::leak(v.into())
}

fn leak_info(m: ModelInfo<'static>) -> &'static ModelInfo<'static> {
    Box::leak(Box::new(m))
}
