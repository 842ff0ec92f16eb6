//! Helium's depthwise loop (Cortex-M55, M85: `usmp_helium`): chunks of sixteen outputs of
//! one row, each summed over every tap of the row in one pass (the input's bytes widened
//! to 16-bit lanes, times the filter's, VMULLB and VMULLT into 32-bit sums) and finished
//! by `requantize::row`'s arithmetic, a run of chunks in one call. Elsewhere the same
//! arithmetic in Rust, which the host tests run against the general loops.

use crate::bytes::int8;
use crate::overlap::Load;

/// The elements a chunk sums together: a Helium register of bytes.
pub(crate) const CHUNK: usize = 16;

/// The most chunks [`chunks`] runs in one call (its output, 256 bytes).
pub(crate) const MOST_CHUNKS: usize = 16;

/// The most taps a list holds: a 10x8 filter (keyword spotting's, micro_speech's) and
/// some.
pub(crate) const MOST_TAPS: usize = 96;

/// The taps a list holds in its smaller form (a 4x4 filter and less): the one the
/// callers clear on every call where that will do (a list is 8 bytes per tap).
pub(crate) const FEW_TAPS: usize = 16;

/// The taps of a row of depthwise outputs as [`chunks`] walks them, in storage of the
/// caller's: for each, where its input and its filter bytes start (relative to a chunk's
/// own starts), and the largest of each, so [`chunks`] checks a whole list with two
/// comparisons.
pub(crate) struct Taps<'a> {
    list: &'a mut [[u32; 2]],
    n: usize,
    most: [usize; 2],
}

impl<'a> Taps<'a> {
    /// No taps, room for `list.len()`.
    pub(crate) fn new(list: &'a mut [[u32; 2]]) -> Self {
        Taps {
            list,
            n: 0,
            most: [0; 2],
        }
    }

    /// Emptied.
    pub(crate) fn clear(&mut self) {
        (self.n, self.most) = (0, [0; 2]);
    }

    /// One more tap, its input at `x` and its filter at `w`; `false` (and the list
    /// unchanged) where the list is full or a start passes 32 bits.
    pub(crate) fn push(&mut self, x: usize, w: usize) -> bool {
        let (Ok(xs), Ok(ws)) = (u32::try_from(x), u32::try_from(w)) else {
            return false;
        };
        let Some(slot) = self.list.get_mut(self.n) else {
            return false;
        };
        *slot = [xs, ws];
        self.n += 1;
        self.most = [self.most[0].max(x), self.most[1].max(w)];
        true
    }
}

/// Where a chunk's elements find their input bytes when they are not the 16 after its
/// start (a stride along the row over pixels of fewer than 16 channels, or a depth
/// multiplier above 1): element `e < 8` at `offsets[e]`, element `e + 8` at `offsets[e] +
/// step`, which a gather load (VLDRB with a vector of offsets) reads.
pub(crate) struct Gather {
    offsets: [u16; 8],
    step: u32,
    /// The input bytes a chunk spans from its start: its last element's, plus one.
    #[cfg_attr(not(usmp_helium), allow(dead_code))]
    span: usize,
}

impl Gather {
    /// Element `e < 8` at `offsets[e]`, element `e + 8` at `offsets[e] + step`.
    pub(crate) fn new(offsets: [u16; 8], step: u32) -> Self {
        let most = offsets.iter().max().copied().unwrap_or(0);
        let span = usize::from(most) + step as usize + 1;
        Gather {
            offsets,
            step,
            span,
        }
    }

    /// Element `e`'s input byte, from the chunk's start.
    fn at(&self, e: usize) -> usize {
        let step = if e < 8 { 0 } else { self.step as usize };
        usize::from(self.offsets[e % 8]) + step
    }
}

/// The requantization of a chunk's elements, element by element: the bias bytes
/// (little-endian words), multipliers and shifts (each in `-31..=-1`, as
/// `requantize::takes` asks) from the first chunk's first element, the output's offset,
/// and whether each chunk takes the next 16 of each (`true`) or the same 16.
#[derive(Clone, Copy)]
pub(crate) struct Finish<'a> {
    pub(crate) bias: &'a [u8],
    pub(crate) multipliers: &'a [i32],
    pub(crate) shifts: &'a [i32],
    pub(crate) offset: i32,
    pub(crate) along: bool,
}

/// A run of chunks: the first's input `at` bytes into `x` (its elements the 16 after, or
/// `gather`'s), each next one `step` bytes further.
pub(crate) struct Input<'a, T> {
    pub(crate) x: &'a [T],
    pub(crate) at: usize,
    pub(crate) step: usize,
    pub(crate) gather: Option<&'a Gather>,
}

/// `out[16j + e]` = the sum over `taps` of `(x[at_x(j) + tx + g(e)] + offset) *
/// w[at_w(j) + tw + e]` (each tap `[tx, tw]`; wrapping; `g(e)` is `e` or the gather's),
/// finished by `finish`, for the [`CHUNK`] elements `e` of each chunk `j <
/// out.len() / 16` (at most [`MOST_CHUNKS`]): `at_x(j)` is `input`'s `at + j * step`,
/// `at_w(j)` is `w.1 + j * w.2`. In assembly where every chunk's taps are in `x` and `w`,
/// each list of `finish` holds the chunks and `offset` fits 16 bits; else the same in
/// Rust (which, like any slice index, panics on a tap outside `x` or `w`: the callers'
/// shapes keep them inside).
#[inline(always)]
pub(crate) fn chunks<T: Load>(
    out: &mut [u8],
    input: Input<'_, T>,
    (w, at_w, w_step): (&[u8], usize, usize),
    (taps, offset): (&Taps<'_>, i32),
    finish: Finish<'_>,
) {
    let count = (out.len() / CHUNK).min(MOST_CHUNKS);
    let list = &taps.list[..taps.n];
    if count == 0 {
        return;
    }
    #[cfg(usmp_helium)]
    if let Some(run) = assembly_run(&input, (w, at_w, w_step), taps, finish, count)
        && let Ok(lane) = i16::try_from(offset)
    {
        in_assembly(&mut out[..count * CHUNK], run, (list, lane), input.gather);
        return;
    }
    let Finish {
        bias,
        multipliers,
        shifts,
        along,
        offset: out_offset,
    } = finish;
    for (j, out) in out.chunks_exact_mut(CHUNK).take(count).enumerate() {
        let mut sums = [0i32; CHUNK];
        let (at_x, at_w) = (input.at + j * input.step, at_w + j * w_step);
        for &[tx, tw] in list {
            let (x, w) = (&input.x[at_x + tx as usize..], &w[at_w + tw as usize..]);
            for (e, (acc, &w)) in sums.iter_mut().zip(&w[..CHUNK]).enumerate() {
                let x = int8(x[input.gather.map_or(e, |g| g.at(e))].load()).wrapping_add(offset);
                *acc = acc.wrapping_add(x.wrapping_mul(int8(w)));
            }
        }
        let l = if along { j * CHUNK } else { 0 };
        let (b, m, s) = (&bias[4 * l..], &multipliers[l..], &shifts[l..]);
        super::requantize::row(&sums, b, m, s, out_offset, out);
    }
}

/// What [`in_assembly`] reads, in the order its `LDR`s take it: the first chunk's input
/// and filter, the bias, multiplier and shift lists, the gather's step, the steps of the
/// input, of the filter and of the lists (64 bytes or none), the chunks, the output
/// offset, the taps.
#[cfg(usmp_helium)]
type Run = [usize; 12];

/// The run [`in_assembly`] may take: `None` unless every chunk's taps are inside `x` (the
/// gather's span from each start) and `w`, the lists hold every chunk, and `x` is bytes.
#[cfg(usmp_helium)]
fn assembly_run<T: Load>(
    input: &Input<'_, T>,
    (w, at_w, w_step): (&[u8], usize, usize),
    taps: &Taps<'_>,
    finish: Finish<'_>,
    count: usize,
) -> Option<Run> {
    let last = |at: usize, step: usize| step.checked_mul(count - 1)?.checked_add(at);
    let inside = |at: Option<usize>, most: usize, span: usize, len: usize| {
        at.and_then(|a| a.checked_add(most)?.checked_add(span))
            .is_some_and(|e| e <= len)
    };
    let span = input.gather.map_or(CHUNK, |g| g.span);
    let x = T::bytes(input.x)?;
    let lists = if finish.along { count * CHUNK } else { CHUNK };
    let Finish {
        bias,
        multipliers: m,
        shifts: s,
        ..
    } = finish;
    let listed = bias.len() >= 4 * lists && m.len() >= lists && s.len() >= lists;
    let x_in = inside(
        last(input.at, input.step),
        taps.most[0],
        span,
        input.x.len(),
    );
    let w_in = inside(last(at_w, w_step), taps.most[1], CHUNK, w.len());
    if !listed || !x_in || !w_in || taps.n == 0 {
        return None;
    }
    Some([
        x.wrapping_add(input.at) as usize,
        w[at_w..].as_ptr() as usize,
        bias.as_ptr() as usize,
        m.as_ptr() as usize,
        s.as_ptr() as usize,
        input.gather.map_or(0, |g| g.step as usize),
        input.step,
        w_step,
        if finish.along { 4 * CHUNK } else { 0 },
        count,
        finish.offset as usize,
        taps.n,
    ])
}

/// [`in_assembly`]'s text: `$load_low` and `$load_high` load a tap's two halves of input
/// into Q4 from its start in R0 (`{n}` holds the gather's step), after `$start` (run once,
/// before the chunks); the rest is the same for both forms. The widening loads and the
/// narrowing stores take low registers only: R0 to R2 are named.
#[cfg(usmp_helium)]
macro_rules! chunks_assembly {
    ($start:literal, $load_low:literal, $load_high:literal,
     ($out:expr, $list:expr, $offset:expr, $run:expr, $tx:expr)) => {
        core::arch::asm!(
            $start,
            "2:",
            "vmov.i32 q0, #0",
            "vmov.i32 q1, #0",
            "vmov.i32 q2, #0",
            "vmov.i32 q3, #0",
            "ldr {x}, [{run}]",
            "ldr {w}, [{run}, #4]",
            "mov {list}, {taps}",
            "ldr {n}, [{run}, #44]",
            "dls lr, {n}",
            "ldr {n}, [{run}, #20]",
            "1:",
            "ldrd r0, r1, [{list}], #8",
            "add r0, r0, {x}",
            "add r1, r1, {w}",
            $load_low,
            "vldrb.s16 q5, [r1]",
            "vadd.i16 q4, q4, {off}",
            "vmullb.s16 q6, q4, q5",
            "vadd.i32 q0, q0, q6",
            "vmullt.s16 q6, q4, q5",
            "vadd.i32 q1, q1, q6",
            $load_high,
            "vldrb.s16 q5, [r1, #8]",
            "vadd.i16 q4, q4, {off}",
            "vmullb.s16 q6, q4, q5",
            "vadd.i32 q2, q2, q6",
            "vmullt.s16 q6, q4, q5",
            "vadd.i32 q3, q3, q6",
            "le lr, 1b",
            // The chunk's sums, interleaved back in element order, on the stack.
            "mov r1, sp",
            "vst20.32 {{q0, q1}}, [r1]",
            "vst21.32 {{q0, q1}}, [r1]!",
            "vst20.32 {{q2, q3}}, [r1]",
            "vst21.32 {{q2, q3}}, [r1]",
            "mov r1, sp",
            // Their registers are free: the lists, then four elements at a time.
            "ldr {x}, [{run}, #8]",
            "ldr {w}, [{run}, #12]",
            "ldr {list}, [{run}, #16]",
            "ldr {n}, [{run}, #40]",
            ".rept 4",
            "vldrw.u32 q0, [r1], #16",
            "vldrb.u8 q1, [{x}], #16",
            "vadd.i32 q0, q0, q1",
            "vldrw.u32 q1, [{w}], #16",
            "vqrdmulh.s32 q0, q0, q1",
            "vshr.s32 q1, q0, #31",
            "vadd.i32 q0, q0, q1",
            "vldrw.u32 q1, [{list}], #16",
            "vrshl.s32 q0, q0, q1",
            "vadd.i32 q0, q0, {n}",
            "vqmovnb.s32 q0, q0",
            "vqmovnb.s16 q0, q0",
            "vstrb.32 q0, [r2], #4",
            ".endr",
            // The next chunk: its lists where they move along, its input and filter.
            "ldr r0, [{run}, #32]",
            "cmp r0, #0",
            "beq 3f",
            "str {x}, [{run}, #8]",
            "str {w}, [{run}, #12]",
            "str {list}, [{run}, #16]",
            "3:",
            "ldrd {x}, {w}, [{run}]",
            "ldrd r0, r1, [{run}, #24]",
            "add {x}, {x}, r0",
            "add {w}, {w}, r1",
            "strd {x}, {w}, [{run}]",
            "subs {count}, {count}, #1",
            "bne 2b",
            "add sp, sp, #64",
            count = inout(reg) $run[9] => _,
            taps = in(reg) $list.as_ptr(),
            list = out(reg) _,
            n = out(reg) _,
            x = out(reg) _,
            w = out(reg) _,
            inout("r0") $tx => _,
            out("r1") _,
            off = in(reg) i32::from($offset),
            run = in(reg) $run.as_mut_ptr(),
            inout("r2") $out.as_mut_ptr() => _,
            out("lr") _,
            out("q0") _,
            out("q1") _,
            out("q2") _,
            out("q3") _,
            out("q4") _,
            out("q5") _,
            out("q6") _,
            out("q7") _,
        )
    };
}

/// [`chunks`]' loop over `run[9] >= 1` chunks whose every tap, for every chunk, has its
/// input (16 bytes, or the gather's) and 16 filter bytes inside their slices, and whose
/// lists hold every chunk (checked by `assembly_run`); `out` is 16 bytes per chunk.
// Out of line: one copy of the two loops, however many callers (each inlined copy cost
// firmware-m55 about 1.5 KB of flash).
#[cfg(usmp_helium)]
#[inline(never)]
fn in_assembly(
    out: &mut [u8],
    mut run: Run,
    (list, offset): (&[[u32; 2]], i16),
    gather: Option<&Gather>,
) {
    assert!(!list.is_empty() && run[9] >= 1 && out.len() == CHUNK * run[9]);
    // SAFETY: per chunk the tap loop runs once per tap of `list` (borrowed, at least one),
    // reading its two words with LDRD, then 16 input bytes at `x + tx` (or the gather's
    // sixteen from there) and 16 at `w + tw`: `assembly_run` checked they are inside
    // their slices (bytes or cells no one writes during this call) for the last chunk,
    // and so for every one, the starts moving up by the steps. It stores the chunk's 64
    // bytes of sums in 64 bytes it reserves below the stack pointer (which stays 8-byte
    // aligned, as VST2 needs its 4) and reads them back, reads 64 bytes of each list from
    // `run`'s addresses (which hold every chunk's; the multipliers and shifts `&[i32]`,
    // aligned for VLDRW), and writes 16 bytes of `out` (borrowed mutably, 16 per chunk).
    // It reads and writes `run` (borrowed mutably, 12 words) and gives the stack back
    // before it ends; it touches no other memory. LR and the flags are declared
    // clobbered; Q4-Q7, callee-saved, are declared clobbered so the compiler saves them.
    unsafe {
        match gather {
            None => chunks_assembly!(
                "sub sp, sp, #64",
                "vldrb.s16 q4, [r0]",
                "vldrb.s16 q4, [r0, #8]",
                (out, list, offset, run, 0usize)
            ),
            Some(g) => chunks_assembly!(
                "sub sp, sp, #64\nvldrh.u16 q7, [r0]",
                "vldrb.s16 q4, [r0, q7]",
                "add r0, r0, {n}\nvldrb.s16 q4, [r0, q7]",
                (out, list, offset, run, g.offsets.as_ptr())
            ),
        }
    }
}
