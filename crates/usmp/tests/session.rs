//! The runtime through a plan written as generated code writes it: a call that reads one
//! tensor twice (`ADD(x, x)`), a call that writes in place, persistent state, scratch that
//! reuses a dead buffer's bytes, a constant. Run under Miri too
//! (`cargo +nightly miri test -p usmp`), which checks every region handed out against
//! Rust's aliasing rules.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use usmp::{
    Buffer, Builtin, CallInfo, Model as _, ModelInfo, Op, PoolInfo, PoolKind, Slot, Source,
    Storage, TakeOnce, Violation, check,
};

#[repr(C, align(4))]
struct Align4<T>(T);

static RAM: Align4<Storage<48>> = Align4(Storage::new());
static ROM: Align4<[u8; 8]> = Align4(*b"weights!");
static ONCE: TakeOnce = TakeOnce::new();

const POOLS: &[PoolInfo<'static>] = &[
    PoolInfo {
        name: "ram",
        kind: PoolKind::Workspace,
        size: 48,
        alignment: 4,
        section: ".usmp.ram",
        loaded: false,
    },
    PoolInfo {
        name: "rom",
        kind: PoolKind::Constant,
        size: 8,
        alignment: 4,
        section: ".usmp.rom",
        loaded: false,
    },
];

struct Pools;

// SAFETY: pool 0 is RAM's 48 bytes, 4-aligned, private to this file and reached only here;
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

type Workspace = usmp::Workspace<Pools>;

const X: u32 = 0;
const Y: u32 = 1;
const STATE: u32 = 2;
const W: u32 = 3;
const TMP: u32 = 4;

const INFO: ModelInfo<'static> = ModelInfo {
    name: "net",
    buffers: &[
        Buffer::new(0, 0, 16, 0, 1),    // x: the model input
        Buffer::new(0, 16, 16, 0, 2),   // y: ADD's output, then MUL's in place
        Buffer::state(0, 32, 16, 0, 2), // state
        Buffer::new(1, 0, 8, 0, 2),     // w: a constant
        Buffer::new(0, 0, 16, 1, 2),    // tmp: call 1's scratch, over x's dead bytes
    ],
    calls: &[
        CallInfo {
            op: Op::Builtin(Builtin::Add),
            options: usmp::Options::None,
            inputs: &[Slot::buffer(X, None), Slot::buffer(X, None)],
            outputs: &[Slot::buffer(Y, None), Slot::buffer(STATE, None)],
            scratch: &[],
        },
        CallInfo {
            op: Op::Builtin(Builtin::Mul),
            options: usmp::Options::None,
            inputs: &[Slot::in_place(0, None), Slot::buffer(W, None)],
            outputs: &[Slot::buffer(Y, None)],
            scratch: &[TMP],
        },
    ],
    inputs: &[Slot::buffer(X, None)],
    outputs: &[Slot::buffer(Y, None)],
    tensors: &[],
    live: &[X, Y, STATE, TMP, Y, STATE],
    live_from: &[0, 3, 6],
    constant_order: &[W],
    images: &[0, 8],
};

const _: () = if let Err(v) = check(POOLS, &INFO) {
    v.fail()
};

struct Net;

// SAFETY: INFO passes `check` (asserted above); pool 1's image is ROM, 8 bytes.
unsafe impl usmp::Model for Net {
    type Pools = Pools;
    const INFO: &'static ModelInfo<'static> = &INFO;
    fn constants(pool: usize) -> &'static [u8] {
        match pool {
            1 => &ROM.0,
            _ => &[],
        }
    }
}

fn range(s: &[u8]) -> (usize, usize) {
    let start = s.as_ptr() as usize;
    (start, start + s.len())
}

/// One test: the workspace can be taken once per process.
#[test]
fn regions_follow_the_plan() {
    let mut ws = Workspace::take().unwrap();
    assert!(
        Workspace::take().is_none(),
        "a second handle must not exist"
    );
    assert_eq!(Net::constant(&INFO.buffers[W as usize]), b"weights!");
    assert!(Net::constant(&INFO.buffers[X as usize]).is_empty());

    let mut net = usmp::Session::<Net>::new(&mut ws);
    assert_eq!(net.calls(), 2);
    assert!(net.input(0).unwrap().iter().all(|&b| b == 0), "take zeroes");
    net.input(0).unwrap().fill(3);

    for inference in 1..=3u8 {
        net.input(0).unwrap().fill(inference);
        {
            let call = net.call(0).unwrap();
            assert_eq!(call.op(), Op::Builtin(Builtin::Add));
            // ADD(x, x): one region, read twice through shared slices.
            let (a, b) = (call.inputs.get(0).unwrap(), call.inputs.get(1).unwrap());
            assert_eq!(a.as_ptr(), b.as_ptr());
            let [y, state] = call.outputs.array::<2>().unwrap();
            for (o, (p, q)) in y.iter_mut().zip(a.iter().zip(b)) {
                *o = p + q;
            }
            state[0] += 1; // counts inferences: must survive everything else
            assert!(call.scratch.is_empty());
        }
        net.poison_dead(0, 0xA5);
        {
            let mut call = net.call(1).unwrap();
            assert_eq!(call.inputs.in_place(0), Some(0));
            assert_eq!(
                call.inputs.get(0),
                None,
                "in place: the output has the bytes"
            );
            assert_eq!(call.inputs.get(1).unwrap(), b"weights!");
            let tmp = call.scratch.next().unwrap().unwrap();
            assert!(
                tmp.iter().all(|&b| b == 0xA5),
                "scratch reuses x's dead bytes"
            );
            let y = call.outputs.get_mut(0).unwrap();
            let (r, t) = (range(y), range(tmp));
            assert!(r.1 <= t.0 || t.1 <= r.0);
            assert!(y.iter().all(|&b| b == 2 * inference));
            y.iter_mut().for_each(|b| *b *= 2);
            assert!(call.scratch.next().is_none());
        }
        assert!(net.call(2).is_none());
        assert!(net.output(0).unwrap().iter().all(|&b| b == 4 * inference));
        net.poison_all(0x5A);
        assert!(net.output(0).unwrap().iter().all(|&b| b == 0x5A));
    }
    // State counted three inferences through poison_all and poison_dead.
    let call = net.call(0).unwrap();
    let [_, state] = call.outputs.array::<2>().unwrap();
    assert_eq!(state[0], 3);
    assert!(state[1..].iter().all(|&b| b == 0));

    // A writable region handed out by the iterator is not handed out again.
    let mut call = net.call(0).unwrap();
    let first = call.outputs.next().unwrap().unwrap();
    assert!(call.outputs.get_mut(0).is_none());
    assert!(call.outputs.get_mut(1).is_some());
    first[0] = 1;
}

/// `check` accepts the plan above and refuses each way of breaking it.
#[test]
fn check_refuses_broken_plans() {
    assert_eq!(check(POOLS, &INFO), Ok(()));

    let mut buffers = INFO.buffers.to_vec();
    buffers[TMP as usize] = Buffer::new(0, 16, 16, 1, 2); // over y, live together
    let broken = leak_info(ModelInfo {
        buffers: leak(buffers),
        live: &[X, Y, STATE, Y, TMP, STATE],
        ..INFO
    });
    assert_eq!(
        check(POOLS, broken),
        Err(Violation::Overlap {
            call: 1,
            a: 1,
            b: 4
        })
    );

    let mut buffers = INFO.buffers.to_vec();
    buffers[Y as usize].size = 40; // past the pool's end
    let broken = leak_info(ModelInfo {
        buffers: leak(buffers),
        ..INFO
    });
    assert_eq!(
        check(POOLS, broken),
        Err(Violation::OutsidePool { buffer: 1 })
    );

    // The certificate leaves a live buffer out, or lists one twice.
    let short = leak_info(ModelInfo {
        live: &[X, Y, STATE, TMP, Y],
        live_from: &[0, 3, 5],
        ..INFO
    });
    assert_eq!(check(POOLS, short), Err(Violation::Certificate { call: 0 }));
    let twice = leak_info(ModelInfo {
        live: &[X, Y, STATE, TMP, Y, Y],
        ..INFO
    });
    assert_eq!(check(POOLS, twice), Err(Violation::Certificate { call: 1 }));

    // ADD(x, x) writing x; writing a constant; scratch that is not live then.
    let calls = leak([
        CallInfo {
            outputs: leak([Slot::buffer(X, None)]),
            ..INFO.calls[0]
        },
        INFO.calls[1],
    ]);
    let writes_input = leak_info(ModelInfo { calls, ..INFO });
    assert_eq!(check(POOLS, writes_input), Err(Violation::Slot { call: 0 }));
    let calls = leak([
        INFO.calls[0],
        CallInfo {
            outputs: leak([Slot::buffer(W, None)]),
            ..INFO.calls[1]
        },
    ]);
    let writes_constant = leak_info(ModelInfo { calls, ..INFO });
    assert_eq!(
        check(POOLS, writes_constant),
        Err(Violation::Slot { call: 1 })
    );
    let calls = leak([
        CallInfo {
            scratch: &[TMP],
            ..INFO.calls[0]
        },
        INFO.calls[1],
    ]);
    let dead_scratch = leak_info(ModelInfo { calls, ..INFO });
    assert_eq!(check(POOLS, dead_scratch), Err(Violation::Slot { call: 0 }));

    // Two constants over each other.
    let mut buffers = INFO.buffers.to_vec();
    buffers.push(Buffer::new(1, 4, 4, 0, 2));
    let constants = leak_info(ModelInfo {
        buffers: leak(buffers),
        constant_order: &[W, 5],
        ..INFO
    });
    assert_eq!(
        check(POOLS, constants),
        Err(Violation::Constants { buffer: 5 })
    );
    assert!(matches!(INFO.calls[1].inputs[0].source, Source::InPlace(0)));
}

fn leak<T>(v: impl Into<Vec<T>>) -> &'static [T] {
    Vec::leak(v.into())
}

fn leak_info(m: ModelInfo<'static>) -> &'static ModelInfo<'static> {
    Box::leak(Box::new(m))
}
