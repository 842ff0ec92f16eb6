//! ADD and MUL with broadcasting: TensorFlow Lite Micro's reference int8 `AddFunc` and
//! `MulElementwise` (as in `BroadcastAdd4DSlow` and `BroadcastMul4DSlow`).
//!
//! Loop order: output element by element, in order. Output element `i` is written after
//! the input elements it broadcasts from are read; an input that is not broadcast is read
//! at element `i` only, so it may share its bytes with the output ([`window`]).

use crate::Error;
use crate::bytes::{int8, want_len};
use crate::fixed::{multiply_by_quantized_multiplier, rescale};
use crate::overlap::{Load, Window, apart, cells, elementwise_window, split};
use crate::params::{Add, Broadcast, Mul, Range};

/// Where the output may lie over input 1: where input 1 is not broadcast (each of its
/// elements read once, at the output element's own index), the window of every
/// element-wise kernel; `None` otherwise.
pub fn window(s: &Broadcast) -> Option<Window> {
    let n: usize = s.output.iter().product();
    (s.first_elements == n && in_order(&s.first, &s.output)).then(|| elementwise_window(n, 1, 1))
}

/// Whether `strides` walk an input of the output's shape in the output's order (element
/// `i` at the output's index `i`): every dimension past 1 at the step of those inside it.
fn in_order(strides: &[usize; 4], output: &[usize; 4]) -> bool {
    let mut step = 1;
    for k in (0..4).rev() {
        if output[k] > 1 && strides[k] != step {
            return false;
        }
        step *= output[k];
    }
    true
}

/// ADD over one region holding input 1 and the output where `shared` says, at a shift
/// its window allows; input 2 apart; `work` as [`add`]'s.
pub fn add_over(
    p: &Add,
    region: &mut [u8],
    shared: &usmp::Shared,
    second: &[u8],
    work: &mut [u8],
) -> Result<(), Error> {
    over(p, region, shared, second, work)
}

/// MUL as [`add_over`].
pub fn mul_over(
    p: &Mul,
    region: &mut [u8],
    shared: &usmp::Shared,
    second: &[u8],
    work: &mut [u8],
) -> Result<(), Error> {
    over(p, region, shared, second, work)
}

/// The work ADD and MUL keep on Helium: a block of output bytes (`work::bytes`).
pub(crate) const WORK: usize = 64;

/// What ADD and MUL share: their shapes, whether their rescalings take the one-rounding
/// form, and one output element from the two input values.
pub(crate) trait Elementwise {
    /// The output's and inputs' shapes.
    fn shape(&self) -> &Broadcast;
    /// Whether every rescaling of the call may take `fixed::rescale`'s one rounding.
    fn rescaled(&self) -> bool;
    /// One output element, rescaled by [`scaled`].
    fn of<const ONE_ROUNDING: bool>(&self, a: i32, b: i32) -> u8;
    /// The constants of the vector path, where it takes the call.
    #[cfg(any(test, usmp_helium))]
    fn row(&self) -> Option<crate::dsp::sums::Row> {
        None
    }
}

/// Every output element of `p`, the rounding chosen once per call; an ADD or MUL of
/// TFLite's form that broadcasts nothing by Helium's vectors (and, in the host tests,
/// their arithmetic in Rust).
#[inline(always)]
fn by<P: Elementwise, T: Load>(
    p: &P,
    first: &[T],
    second: &[u8],
    output: (usize, impl FnMut(usize, u8)),
    work: &mut [u8],
) -> Result<(), Error> {
    // Only the vector path keeps work.
    #[cfg(not(any(test, usmp_helium)))]
    let _ = work;
    #[cfg(any(test, usmp_helium))]
    let output = match vectors(p, first, second, output, work) {
        Ok(done) => return done,
        Err(declined) => declined,
    };
    if p.rescaled() {
        each(
            p.shape(),
            first,
            second,
            output,
            #[inline(always)]
            |a, b| p.of::<true>(a, b),
        )
    } else {
        each(
            p.shape(),
            first,
            second,
            output,
            #[inline(always)]
            |a, b| p.of::<false>(a, b),
        )
    }
}

/// [`by`]'s vector path: the output a block of `sums::BLOCK` at a time into a buffer in
/// `work`, then stored (each block's inputs are read before its outputs are written, so
/// an output over input 1 is safe at every shift [`window`] allows). `Err` hands the
/// output back where the call is not one it takes or `work` is shorter than [`WORK`].
#[cfg(any(test, usmp_helium))]
#[allow(clippy::type_complexity)]
fn vectors<P: Elementwise, T: Load, F: FnMut(usize, u8)>(
    p: &P,
    first: &[T],
    second: &[u8],
    (len, mut put): (usize, F),
    work: &mut [u8],
) -> Result<Result<(), Error>, (usize, F)> {
    use crate::dsp::sums;
    use crate::overlap::Put;
    let Some(row) = p.row() else {
        return Err((len, put));
    };
    let n = match checked(p.shape(), first.len(), second.len(), len) {
        Ok((n, true)) => n,
        Ok((_, false)) => return Err((len, put)),
        Err(e) => return Ok(Err(e)),
    };
    const { assert!(WORK == sums::BLOCK) };
    let Some(block) = crate::plain::Carve::new(work).one::<[u8; WORK]>() else {
        return Err((len, put));
    };
    for o in (0..n).step_by(sums::BLOCK) {
        let m = (n - o).min(sums::BLOCK);
        let (a, b, out) = (&first[o..o + m], &second[o..o + m], &mut block[..m]);
        #[cfg(usmp_helium)]
        if !sums::run(&row, a, b, out) {
            return Err((len, put));
        }
        #[cfg(not(usmp_helium))]
        for ((out, a), &b) in out.iter_mut().zip(a).zip(b) {
            *out = sums::portable(&row, a.load(), b);
        }
        put.row(o, out);
    }
    Ok(Ok(()))
}

/// [`by`] over one region holding input 1 and the output.
fn over<P: Elementwise>(
    p: &P,
    region: &mut [u8],
    shared: &usmp::Shared,
    second: &[u8],
    work: &mut [u8],
) -> Result<(), Error> {
    let refused = Error::Overlap {
        shift: shared.shift(),
        most: isize::MIN,
    };
    let [first, output] = split(region, shared, window(p.shape()).ok_or(refused)?)?;
    by(p, first, second, cells(output), work)
}

/// The output's elements, the inputs' and the output's lengths checked against the
/// shapes, and whether neither input is broadcast (both of the output's shape, in its
/// order).
fn checked(s: &Broadcast, first: usize, second: usize, len: usize) -> Result<(usize, bool), Error> {
    want_len("elementwise input 1", first, s.first_elements)?;
    want_len("elementwise input 2", second, s.second_elements)?;
    let n: usize = s.output.iter().product();
    want_len("elementwise output", len, n)?;
    let plain = |strides: &[usize; 4], elements| elements == n && in_order(strides, &s.output);
    Ok((
        n,
        plain(&s.first, s.first_elements) && plain(&s.second, s.second_elements),
    ))
}

/// Writes every output element as `f(input 1 value, input 2 value)`.
///
/// Where neither input is broadcast (both of the output's shape, in its order), one loop
/// walks the three in step; otherwise each element's index is taken from the strides.
#[inline(always)]
pub(crate) fn each<T: Load>(
    s: &Broadcast,
    first: &[T],
    second: &[u8],
    (len, mut put): (usize, impl FnMut(usize, u8)),
    f: impl Fn(i32, i32) -> u8,
) -> Result<(), Error> {
    let (n, plain) = checked(s, first.len(), second.len(), len)?;
    if plain {
        for (o, (a, &b)) in first[..n].iter().zip(&second[..n]).enumerate() {
            put(o, f(int8(a.load()), int8(b)));
        }
        return Ok(());
    }
    let at =
        |st: &[usize; 4], i: [usize; 4]| i[0] * st[0] + i[1] * st[1] + i[2] * st[2] + i[3] * st[3];
    let [d0, d1, d2, d3] = s.output;
    let mut o = 0;
    for i0 in 0..d0 {
        for i1 in 0..d1 {
            for i2 in 0..d2 {
                for i3 in 0..d3 {
                    let i = [i0, i1, i2, i3];
                    let (a, b) = (at(&s.first, i), at(&s.second, i));
                    if a >= first.len() || b >= second.len() {
                        return Err(Error::Parameters {
                            what: "elementwise input",
                            problem: "a broadcast stride reaches past the input",
                        });
                    }
                    put(o, f(int8(first[a].load()), int8(second[b])));
                    o += 1;
                }
            }
        }
    }
    Ok(())
}

/// ADD: both inputs rescaled to a common scale with `left_shift` bits of headroom,
/// summed, and rescaled to the output; `work` holds the call's
/// [`work::bytes`](crate::work::bytes) (Helium's block).
pub fn add(
    p: &Add,
    first: &[u8],
    second: &[u8],
    output: &mut [u8],
    work: &mut [u8],
) -> Result<(), Error> {
    by(p, first, second, apart(output), work)
}

/// `multiply_by_quantized_multiplier(x, multiplier, shift)`: with `ONE_ROUNDING` by
/// [`rescale`]'s one 64-bit product and one rounding (the call's multipliers and shifts
/// checked for it: [`Add::rescaled`]), TFLite's two steps otherwise. The same integer.
#[inline(always)]
fn scaled<const ONE_ROUNDING: bool>(x: i32, [multiplier, shift]: [i32; 2]) -> i32 {
    if ONE_ROUNDING {
        rescale(x, multiplier, shift)
    } else {
        multiply_by_quantized_multiplier(x, multiplier, shift)
    }
}

/// An int8 output from its int32 value: rescaled by [`scaled`], offset, clamped.
#[inline(always)]
fn output<const ONE_ROUNDING: bool>(x: i32, by: [i32; 2], offset: i32, [lo, hi]: Range) -> u8 {
    let v = scaled::<ONE_ROUNDING>(x, by).wrapping_add(offset);
    v.clamp(lo, hi) as i8 as u8
}

impl Elementwise for Add {
    fn shape(&self) -> &Broadcast {
        &self.shape
    }

    fn rescaled(&self) -> bool {
        Add::rescaled(self)
    }

    #[cfg(any(test, usmp_helium))]
    fn row(&self) -> Option<crate::dsp::sums::Row> {
        crate::dsp::sums::Row::add(self)
    }

    /// One output element of ADD.
    #[inline(always)]
    fn of<const ONE_ROUNDING: bool>(&self, a: i32, b: i32) -> u8 {
        let scale = |x: i32, offset: i32, by: [i32; 2]| {
            let shifted = (x + offset).wrapping_mul(1 << self.left_shift.min(30));
            scaled::<ONE_ROUNDING>(shifted, by)
        };
        let first = scale(a, self.first_offset, self.first);
        let sum = first.wrapping_add(scale(b, self.second_offset, self.second));
        output::<ONE_ROUNDING>(sum, self.output, self.output_offset, self.activation)
    }
}

/// MUL: the product of the offset inputs, rescaled to the output; `work` as [`add`]'s.
pub fn mul(
    p: &Mul,
    first: &[u8],
    second: &[u8],
    output: &mut [u8],
    work: &mut [u8],
) -> Result<(), Error> {
    by(p, first, second, apart(output), work)
}

impl Elementwise for Mul {
    fn shape(&self) -> &Broadcast {
        &self.shape
    }

    fn rescaled(&self) -> bool {
        Mul::rescaled(self)
    }

    #[cfg(any(test, usmp_helium))]
    fn row(&self) -> Option<crate::dsp::sums::Row> {
        crate::dsp::sums::Row::mul(self)
    }

    /// One output element of MUL.
    #[inline(always)]
    fn of<const ONE_ROUNDING: bool>(&self, a: i32, b: i32) -> u8 {
        let product = (a + self.first_offset).wrapping_mul(b + self.second_offset);
        output::<ONE_ROUNDING>(product, self.output, self.output_offset, self.activation)
    }
}

#[cfg(test)]
pub(crate) mod tests;
