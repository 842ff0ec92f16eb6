//! A constant pool run from RAM ([`PoolInfo::loaded`]): the image stays where the firmware
//! stores it, `Workspace::take` copies it into the pool's own storage, and sessions read
//! the copy, never the image. Run under Miri too.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use usmp::{
    Buffer, Builtin, CallInfo, Model as _, ModelInfo, Op, PoolInfo, PoolKind, Slot, Storage,
    TakeOnce, Violation, check,
};

#[repr(C, align(4))]
struct Align4<T>(T);

static RAM: Align4<Storage<16>> = Align4(Storage::new());
/// The image, as flash holds it.
static IMAGE: Align4<[u8; 8]> = Align4(*b"weights!");
/// Where it runs from: uninitialised until the workspace is taken.
static COPY: Align4<Storage<8>> = Align4(Storage::new());
static ONCE: TakeOnce = TakeOnce::new();

const POOLS: &[PoolInfo<'static>] = &[
    PoolInfo {
        name: "ram",
        kind: PoolKind::Workspace,
        size: 16,
        alignment: 4,
        section: ".usmp.ram",
        loaded: false,
    },
    PoolInfo {
        name: "tcm_weights",
        kind: PoolKind::Constant,
        size: 8,
        alignment: 4,
        section: ".usmp.tcm_weights",
        loaded: true,
    },
];

struct Pools;

// SAFETY: pool 0 is RAM's 16 bytes, 4-aligned, private to this file; ONCE serves nothing
// else; the one loaded pool's one model (Net) has its image in IMAGE and its copy in
// COPY, 8 bytes each, private and apart. `Bare` declares no copy, which is what the
// second half of the test is about.
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
    fn load(i: usize) -> Option<(&'static [u8], *mut u8)> {
        match i {
            0 => Some((Net::constants(1), Net::copy(1))),
            _ => None,
        }
    }
}

type Workspace = usmp::Workspace<Pools>;

const W: u32 = 1;

const INFO: ModelInfo<'static> = ModelInfo {
    name: "net",
    buffers: &[
        Buffer::new(0, 0, 8, 0, 1), // x: the model input
        Buffer::new(1, 0, 8, 0, 1), // w: a constant run from RAM
        Buffer::new(0, 8, 8, 0, 1), // y: the output
    ],
    calls: &[CallInfo {
        op: Op::Builtin(Builtin::Add),
        options: usmp::Options::None,
        inputs: &[Slot::buffer(0, None), Slot::buffer(W, None)],
        outputs: &[Slot::buffer(2, None)],
        scratch: &[],
    }],
    inputs: &[Slot::buffer(0, None)],
    outputs: &[Slot::buffer(2, None)],
    tensors: &[],
    live: &[0, 2],
    live_from: &[0, 2],
    constant_order: &[W],
    images: &[0, 8],
};

const _: () = if let Err(v) = check(POOLS, &INFO) {
    v.fail()
};

struct Net;

// SAFETY: INFO passes `check` (asserted above); pool 1's image is IMAGE and its copy COPY,
// 8 bytes each, listed by `Pools::load`.
unsafe impl usmp::Model for Net {
    type Pools = Pools;
    const INFO: &'static ModelInfo<'static> = &INFO;
    fn constants(pool: usize) -> &'static [u8] {
        match pool {
            1 => &IMAGE.0,
            _ => &[],
        }
    }
    fn copy(pool: usize) -> *mut u8 {
        match pool {
            1 => COPY.0.base(),
            _ => core::ptr::null_mut(),
        }
    }
}

/// The same plan, from a model that does not say where its copy is.
struct Bare;

// SAFETY: as Net's, but `copy` is left at its default (null), which the session must
// answer with no region rather than with the image or a wild pointer.
unsafe impl usmp::Model for Bare {
    type Pools = Pools;
    const INFO: &'static ModelInfo<'static> = &INFO;
    fn constants(pool: usize) -> &'static [u8] {
        Net::constants(pool)
    }
}

fn inside(region: &[u8], storage: *const u8, len: usize) -> bool {
    let (start, base) = (region.as_ptr() as usize, storage as usize);
    base <= start && start + region.len() <= base + len
}

/// One test: the workspace can be taken once per process.
#[test]
fn sessions_read_the_copy_that_take_made() {
    // Before take the image is readable; only sessions, which need the workspace, read
    // the copy.
    assert_eq!(Net::constant(&INFO.buffers[W as usize]), b"weights!");
    {
        let mut ws = Workspace::take().unwrap();
        {
            let mut net = usmp::Session::<Net>::new(&mut ws);
            net.input(0).unwrap().copy_from_slice(&[1; 8]);
            {
                let mut call = net.call(0).unwrap();
                let w = call.inputs.get(1).unwrap();
                assert_eq!(w, b"weights!", "take copied the image");
                assert!(inside(w, COPY.0.base(), 8), "the region is the copy");
                assert!(!inside(w, IMAGE.0.as_ptr(), 8), "not the image in flash");
                let sum: Vec<u8> = w.iter().map(|b| b + 1).collect();
                call.outputs.get_mut(0).unwrap().copy_from_slice(&sum);
            }
            assert_eq!(net.output(0).unwrap(), b"xfjhiut\"");
        }
        {
            let mut bare = usmp::Session::<Bare>::new(&mut ws);
            let call = bare.call(0).unwrap();
            assert_eq!(call.inputs.get(1), None, "no copy declared: no weights");
        }
    }
    // Steal copies again: the copy holds the image whatever happened to it.
    // SAFETY: the only handle went out of scope above, and no region of it is alive.
    let mut ws = unsafe { Workspace::steal() };
    let mut net = usmp::Session::<Net>::new(&mut ws);
    assert_eq!(net.call(0).unwrap().inputs.get(1).unwrap(), b"weights!");
}

/// Only a constant pool may be run from RAM: a workspace pool marked `loaded` is a table
/// `check` refuses.
#[test]
fn a_loaded_workspace_pool_is_refused() {
    let pools = [
        PoolInfo {
            loaded: true,
            ..POOLS[0]
        },
        POOLS[1],
    ];
    assert_eq!(check(&pools, &INFO), Err(Violation::Pool));
}
