//! Random sampling that gives the same numbers on every machine.
//!
//! The random bits come from ChaCha8, which is portable. Turning bits into samples must be
//! portable too: `f64::ln`, `f64::exp` and `f64::powf` call the platform's math library,
//! whose last bits differ between systems, and one flipped bit can move a Zipf sample or an
//! arrival time and change a trace. So [`ln`] and [`exp`] here use only IEEE-754 basic
//! operations (`+ - * /` and rounding), which are exactly rounded everywhere. They are
//! accurate to a few ulps, which is plenty for sampling.

use rand::RngCore;

const LN_2: f64 = std::f64::consts::LN_2;
/// ln 2 split so that `k * LN_2_HI` is exact for the exponents `exp` meets.
const LN_2_HI: f64 = 6.931_471_803_691_238e-1;
const LN_2_LO: f64 = 1.908_214_929_270_587_7e-10;
const TWO_POW_54: f64 = 18_014_398_509_481_984.0;

/// Natural logarithm. `ln(0) = -inf`; negative or NaN input gives NaN.
pub fn ln(x: f64) -> f64 {
    if x.is_nan() || x < 0.0 {
        return f64::NAN;
    }
    if x == 0.0 {
        return f64::NEG_INFINITY;
    }
    if x.is_infinite() {
        return x;
    }
    // Normalize subnormals so the exponent field is meaningful.
    let (x, bias) = if x < f64::MIN_POSITIVE {
        (x * TWO_POW_54, -54)
    } else {
        (x, 0)
    };
    let bits = x.to_bits();
    let mut exponent = ((bits >> 52) & 0x7ff) as i64 - 1023 + bias;
    // Mantissa in [1, 2), then moved to [sqrt(1/2), sqrt(2)) to keep the series short.
    let mut m = f64::from_bits((bits & ((1u64 << 52) - 1)) | (1023u64 << 52));
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5;
        exponent += 1;
    }
    // ln m = 2 atanh z with z = (m - 1) / (m + 1), |z| <= 0.1716.
    let z = (m - 1.0) / (m + 1.0);
    let z2 = z * z;
    let mut series = 0.0;
    for odd in (3..=25).rev().step_by(2) {
        series = z2 * (1.0 / odd as f64 + series);
    }
    let ln_m = 2.0 * z * (1.0 + series);
    let e = exponent as f64;
    e * LN_2_HI + (ln_m + e * LN_2_LO)
}

/// e^x. Overflows to +inf above about 709.78 and underflows to 0 below about -745.13.
pub fn exp(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x > 709.79 {
        return f64::INFINITY;
    }
    if x < -745.2 {
        return 0.0;
    }
    // x = k ln 2 + r with |r| <= ln 2 / 2, so e^x = 2^k e^r.
    let k = (x / LN_2).round();
    let r = (x - k * LN_2_HI) - k * LN_2_LO;
    let mut taylor = 1.0;
    for n in (1..=15).rev() {
        taylor = 1.0 + taylor * r / n as f64;
    }
    scale_by_power_of_two(taylor, k as i32)
}

/// `y * 2^k`, built from exponent bits so no library call is involved.
fn scale_by_power_of_two(y: f64, k: i32) -> f64 {
    let power = |k: i32| f64::from_bits(((k + 1023) as u64) << 52);
    if k > 1023 {
        y * power(1023) * power(k - 1023)
    } else if k < -1022 {
        y * power(-1022) * power(k + 1022)
    } else {
        y * power(k)
    }
}

/// A uniform number in [0, 1) with 53 random bits.
#[inline]
pub fn unit(rng: &mut impl RngCore) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A sample of the exponential distribution with mean 1.
#[inline]
pub fn standard_exponential(rng: &mut impl RngCore) -> f64 {
    // 1 - unit is in (0, 1], so the logarithm is finite.
    -ln(1.0 - unit(rng))
}

/// Walker's alias table (Vose's construction): samples an index with probability
/// proportional to its weight in O(1), one random `u64` per sample.
#[derive(Debug, Clone)]
pub struct AliasTable {
    /// Keep index `i` when the low 32 bits of the sample are below `threshold[i]`.
    threshold: Vec<u32>,
    alias: Vec<u32>,
}

impl AliasTable {
    /// `None` when there are no weights, more than `u32::MAX` of them, a weight is negative
    /// or not finite, or they sum to zero.
    pub fn new(weights: &[f64]) -> Option<Self> {
        let n = weights.len();
        if n == 0 || u32::try_from(n).is_err() {
            return None;
        }
        if weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
            return None;
        }
        let total: f64 = weights.iter().sum();
        if !(total > 0.0 && total.is_finite()) {
            return None;
        }
        let mut scaled: Vec<f64> = weights.iter().map(|w| w * n as f64 / total).collect();
        let mut threshold = vec![u32::MAX; n];
        let mut alias: Vec<u32> = (0..n as u32).collect();
        let mut small: Vec<u32> = Vec::new();
        let mut large: Vec<u32> = Vec::new();
        for (i, &p) in scaled.iter().enumerate() {
            if p < 1.0 {
                small.push(i as u32);
            } else {
                large.push(i as u32);
            }
        }
        while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
            small.pop();
            let p = scaled[s as usize];
            threshold[s as usize] = (p * 4_294_967_296.0) as u32;
            alias[s as usize] = l;
            scaled[l as usize] = (scaled[l as usize] + p) - 1.0;
            if scaled[l as usize] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        // Whatever is left has probability 1 up to rounding: it always keeps itself, as
        // set above (threshold u32::MAX with alias to itself).
        Some(AliasTable { threshold, alias })
    }

    /// The index for one random `u64`: the high half picks a column, the low half decides
    /// between the column and its alias.
    #[inline]
    pub fn sample(&self, random: u64) -> usize {
        let column = (((random >> 32) * self.threshold.len() as u64) >> 32) as usize;
        if (random as u32) < self.threshold[column] {
            column
        } else {
            self.alias[column] as usize
        }
    }
}

/// Zipf weights `(rank + 1)^-exponent` for ranks `0..n`: rank 0 is the most popular.
pub fn zipf_weights(n: usize, exponent: f64) -> Vec<f64> {
    (1..=n).map(|k| exp(-exponent * ln(k as f64))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 4.0 * f64::EPSILON * b.abs().max(f64::MIN_POSITIVE)
    }

    #[test]
    fn ln_and_exp_agree_with_the_platform_within_a_few_ulps() {
        let inputs = [
            1e-300, 1e-20, 0.001, 0.1, 0.5, 0.7, 0.9999, 1.0, 1.0001, 1.5, 2.0, 3.0, 10.0, 123.456,
            65_536.0, 1e20, 1e300,
        ];
        for x in inputs {
            assert!(
                close(ln(x), x.ln()) || (ln(x) - x.ln()).abs() < 1e-15,
                "ln({x})"
            );
        }
        for x in [
            -700.0, -50.0, -1.0, -0.3, 0.0, 1e-10, 0.3, 1.0, 7.5, 50.0, 700.0,
        ] {
            assert!(
                close(exp(x), x.exp()),
                "exp({x}) = {} vs {}",
                exp(x),
                x.exp()
            );
        }
        assert_eq!(ln(0.0), f64::NEG_INFINITY);
        assert!(ln(-1.0).is_nan());
        assert_eq!(exp(1000.0), f64::INFINITY);
        assert_eq!(exp(-1000.0), 0.0);
        // Subnormal results and inputs stay finite and ordered.
        assert!(exp(-740.0) > 0.0 && exp(-740.0) < 1e-320);
        assert!((ln(5e-324) - (5e-324f64).ln()).abs() < 1e-12);
    }

    #[test]
    fn alias_table_matches_its_weights() {
        let weights = [5.0, 0.0, 1.0, 2.0, 0.5];
        let table = AliasTable::new(&weights).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut counts = [0u64; 5];
        let draws = 400_000;
        for _ in 0..draws {
            counts[table.sample(rng.next_u64())] += 1;
        }
        let total: f64 = weights.iter().sum();
        for (i, w) in weights.iter().enumerate() {
            let expected = w / total;
            let observed = counts[i] as f64 / draws as f64;
            assert!(
                (observed - expected).abs() < 0.005,
                "index {i}: {observed} vs {expected}"
            );
        }
        assert_eq!(counts[1], 0, "a zero weight is never drawn");
    }

    #[test]
    fn alias_table_rejects_bad_weights() {
        assert!(AliasTable::new(&[]).is_none());
        assert!(AliasTable::new(&[0.0, 0.0]).is_none());
        assert!(AliasTable::new(&[1.0, -1.0]).is_none());
        assert!(AliasTable::new(&[1.0, f64::NAN]).is_none());
        assert!(AliasTable::new(&[f64::INFINITY]).is_none());
    }

    #[test]
    fn standard_exponential_has_mean_one() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let n = 200_000;
        let mean = (0..n).map(|_| standard_exponential(&mut rng)).sum::<f64>() / n as f64;
        assert!((mean - 1.0).abs() < 0.01, "{mean}");
    }
}
