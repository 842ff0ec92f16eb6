//! Guest instructions per inference and per operator call of seven TensorFlow Lite
//! models (person_detect, micro_speech, magic_wand, hello_world, unet, and the fixture's
//! branches and tall, for ADD, MUL and int8 pooling) run by usmp-kernels from planned
//! memory, counted in QEMU with `-icount shift=0`: every guest instruction advances the
//! virtual clock by 1 ns. On Cortex-M, SysTick, clocked from it, counts them (the ratio of
//! instructions to ticks calibrated against a loop of known length at start-up); on RISC-V,
//! `minstret` reads QEMU's instruction count itself (`clock`).
//!
//! Each model runs its first test input twice: once through the generated `invoke` (the
//! per-inference figure, what a firmware runs) and once call by call through
//! `usmp_kernels::run_only` with the same kernels linked (the per-operator table). Both
//! outputs must equal TensorFlow Lite Micro's, or the run fails: a count of a wrong computation is worth nothing.
//!
//! Then it draws 2,000 random convolutions (`check`: 1x1, small kxk, depthwise of
//! multiplier 1 and more, odd shapes none of the models has) and compares every output
//! byte of the kernels' paths on this core, assembly included, with a reference written
//! here, apart and over its input: the kernels' own tests run the assembly's portable
//! form, on the host.
//!
//! `bench.sh` beside this file runs it on six builds (four Cortex-M cores, the M55 twice,
//! and RV32IMC), twice each, and compares the counts with `counts.txt`. Instructions are not cycles: see docs/performance.md.
#![no_std]
#![no_main]

#[cfg(target_arch = "arm")]
use cortex_m_rt::entry;
#[cfg(target_arch = "arm")]
use cortex_m_semihosting::{debug, hprintln};
#[cfg(target_arch = "riscv32")]
use riscv_rt::entry;
#[cfg(target_arch = "riscv32")]
use riscv_semihosting::{debug, hprintln};

use clock::Clock;
use firmware_common::{exit, fail};
use usmp_kernels::{CallError, Error, Kernel};

mod check;
mod clock;

/// Random convolutions [`check::convolutions`] runs after the bench.
const CHECKED: usize = 2000;

/// Random ADD and MUL calls [`check::elementwise`] runs after them.
const ELEMENTWISE: usize = 300;

mod usmp {
    include!(concat!(env!("OUT_DIR"), "/usmp.rs"));
}

/// Instructions per kind of operator: name, calls, instructions.
struct Table {
    rows: [(&'static str, u32, u64); 16],
    len: usize,
}

impl Table {
    fn add(&mut self, op: &'static str, instructions: u64) {
        let found = self.rows[..self.len].iter().position(|r| r.0 == op);
        let k = match found {
            Some(k) => k,
            None if self.len < self.rows.len() => {
                self.len += 1;
                self.rows[self.len - 1] = (op, 0, 0);
                self.len - 1
            }
            None => fail("more than 16 kinds of operator"),
        };
        self.rows[k].1 += 1;
        self.rows[k].2 += instructions;
    }
}

/// A model's workspace session, kernels and first test case (input bytes, then TensorFlow
/// Lite Micro's output bytes).
struct Bench<'a, M: ::usmp::Model> {
    name: &'a str,
    kernels: &'a [Kernel<'static>],
    invoke: fn(&mut ::usmp::Session<'_, M>) -> Result<(), CallError>,
    /// `usmp_kernels::run_only` with the model's `USED_KERNELS`, what `invoke` runs.
    run: fn(&Kernel<'_>, &mut ::usmp::Call<'_>) -> Result<(), Error>,
    cases: &'a [u8],
}

/// Runs `b` through `invoke` and call by call, prints both counts, and says whether both
/// outputs equal TensorFlow Lite Micro's.
fn run<M: ::usmp::Model>(
    b: &Bench<'_, M>,
    session: &mut ::usmp::Session<'_, M>,
    clock: Clock,
) -> bool {
    let input_len = session.input(0).map_or(0, |i| i.len());
    let output_len = session.output(0).map_or(0, <[u8]>::len);
    let Some(case) = b.cases.get(..input_len + output_len) else {
        fail("the test data is shorter than one case")
    };
    let (input, expected) = case.split_at(input_len);
    let load = |session: &mut ::usmp::Session<'_, M>| {
        if let Some(i) = session.input(0) {
            i.copy_from_slice(input);
        }
    };
    load(session);
    let (done, inference) = clock.count(|| (b.invoke)(session));
    let mut same = done.is_ok() && session.output(0) == Some(expected);
    load(session);
    let mut table = Table {
        rows: [("", 0, 0); 16],
        len: 0,
    };
    for (i, kernel) in b.kernels.iter().enumerate() {
        let op = <M as ::usmp::Model>::INFO.calls[i].op.name();
        let Some(mut call) = session.call(i) else {
            fail("a call is missing")
        };
        let (done, n) = clock.count(|| (b.run)(kernel, &mut call));
        same &= done.is_ok();
        table.add(op, n);
    }
    same &= session.output(0) == Some(expected);
    let verdict = if same { "= TFLite Micro" } else { "DIFFERENT" };
    hprintln!(
        "model {} {} {} calls, output {}",
        b.name,
        inference,
        b.kernels.len(),
        verdict
    );
    for (op, calls, n) in &table.rows[..table.len] {
        hprintln!("  op {} {} {} calls", op, n, calls);
    }
    same
}

#[entry]
fn main() -> ! {
    let clock = clock::start();
    hprintln!(
        "bench on {}: {} instructions per {} {}",
        env!("BENCH_CORE"),
        clock.instructions,
        clock.ticks,
        clock::UNIT
    );
    let Some(mut ws) = usmp::Workspace::take() else {
        fail("the workspace was taken twice")
    };
    let mut all = true;
    // One model's bench: its generated module and its test data in fixtures/tflite.
    macro_rules! bench {
        ($model:ident, $data:literal) => {
            all &= run(
                &Bench {
                    name: stringify!($model),
                    kernels: usmp::$model::KERNELS,
                    invoke: usmp::$model::invoke,
                    run: usmp_kernels::run_only::<{ usmp::$model::USED_KERNELS }>,
                    cases: include_bytes!(concat!("../../../fixtures/tflite/testdata/", $data)),
                },
                &mut usmp::$model::Model::session(&mut ws),
                clock,
            )
        };
    }
    bench!(person_detect, "person_detect.bin");
    bench!(person_detect_whole, "person_detect.bin");
    bench!(person_detect_apart, "person_detect.bin");
    bench!(micro_speech, "micro_speech_quantized.bin");
    bench!(magic_wand, "magic_wand.bin");
    bench!(hello_world, "hello_world_int8.bin");
    bench!(unet, "unet.bin");
    bench!(branches, "branches.bin");
    bench!(tall, "tall.bin");
    if !all {
        fail("an output differs from TFLite Micro's");
    }
    // After the counts, so they are taken as before.
    match check::convolutions(CHECKED) {
        Ok((ran, over)) => hprintln!(
            "{} random convolutions ({} of them over their input too) equal the reference",
            ran,
            over
        ),
        Err((case, kind)) => {
            hprintln!(
                "convolution case {} (kind {}) differs from the reference",
                case,
                kind
            );
            fail("a convolution's fast path differs from the reference on this core");
        }
    }
    match check::elementwise(ELEMENTWISE) {
        Ok(ran) => hprintln!("{} random ADD and MUL calls equal the reference", ran),
        Err(case) => {
            hprintln!("ADD or MUL case {} differs from the reference", case);
            fail("ADD or MUL differs from the reference on this core");
        }
    }
    exit(debug::EXIT_SUCCESS)
}
