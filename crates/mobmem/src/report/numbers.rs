//! Numbers for people: on axes, in tables and in the pages. The data files
//! (`results.csv`, the JSON files) keep every digit; these functions are for what is read.

/// `v` with at most `digits` significant digits, trailing zeros dropped, no exponent
/// between 10^-4 and 10^15 ("17.9", "0.05", "1345", "-0.0452"); "-" for NaN.
pub fn significant(v: f64, digits: usize) -> String {
    if v.is_nan() {
        return "-".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    if !(1e-4..1e15).contains(&a) {
        return trim_exponent(&format!("{v:.*e}", digits.saturating_sub(1)));
    }
    let magnitude = a.log10().floor() as i32;
    let decimals = (digits as i32 - 1 - magnitude).max(0) as usize;
    trim_zeros(&format!("{v:.decimals$}"))
}

/// `text` (a fixed-point number) without trailing zeros after the point, nor the point.
fn trim_zeros(text: &str) -> String {
    if !text.contains('.') {
        return fix_negative_zero(text);
    }
    let t = text.trim_end_matches('0').trim_end_matches('.');
    fix_negative_zero(t)
}

fn fix_negative_zero(t: &str) -> String {
    if t.starts_with('-') && t[1..].chars().all(|c| c == '0' || c == '.') {
        t[1..].to_string()
    } else {
        t.to_string()
    }
}

/// "1.50e7" as "1.5e7".
fn trim_exponent(text: &str) -> String {
    match text.split_once('e') {
        Some((mantissa, exponent)) => format!("{}e{exponent}", trim_zeros(mantissa)),
        None => text.to_string(),
    }
}

/// A mean and its interval, all three with the same decimals: enough for the interval's
/// half-width to show two significant digits (at most 4 decimals), or for the mean to
/// show 3 significant digits when the interval has no width.
pub fn interval(mean: f64, lo: f64, hi: f64) -> [String; 3] {
    if !(mean.is_finite() && lo.is_finite() && hi.is_finite()) {
        return [significant(mean, 3), significant(lo, 3), significant(hi, 3)];
    }
    let half = (hi - lo) / 2.0;
    let basis = if half > 0.0 { half } else { mean.abs() };
    let digits = if half > 0.0 { 2 } else { 3 };
    if basis == 0.0 {
        return ["0".into(), "0".into(), "0".into()];
    }
    if mean.abs() >= 1e15 || (basis < 1e-4 && mean.abs() < 1e-4) {
        return [significant(mean, 3), significant(lo, 3), significant(hi, 3)];
    }
    let magnitude = basis.log10().floor() as i32;
    let decimals = (digits - 1 - magnitude).clamp(0, 4) as usize;
    let f = |v: f64| fix_negative_zero(&format!("{v:.decimals$}"));
    [f(mean), f(lo), f(hi)]
}

/// A key value for people: a number with more digits than it needs ("0.30000000000000004"
/// from a sum of fractions) shortened to 6 significant digits; anything else as it is.
pub fn key(text: &str) -> String {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && text.len() > 8 => {
            let short = significant(v, 6);
            if short.len() < text.len() {
                short
            } else {
                text.to_string()
            }
        }
        _ => text.to_string(),
    }
}

/// How one axis writes its tick labels: the same decimals on every tick, and, for large
/// or tiny values, a power of ten taken out into the axis title.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AxisFormat {
    pub decimals: usize,
    /// The ticks show `v / 10^exponent`.
    pub exponent: i32,
}

impl AxisFormat {
    /// The format for an axis whose ticks are `ticks`: the fewest decimals (up to 6) that
    /// write each tick exactly; values of 10^6 and more (or under 10^-3) are shown
    /// divided by a power of ten that is a multiple of 3.
    pub fn for_ticks(ticks: &[f64]) -> AxisFormat {
        let largest = ticks
            .iter()
            .map(|t| t.abs())
            .filter(|t| t.is_finite())
            .fold(0.0, f64::max);
        let exponent = if largest >= 1e6 || (largest > 0.0 && largest < 1e-3) {
            (largest.log10() / 3.0).floor() as i32 * 3
        } else {
            0
        };
        let scale = 10f64.powi(exponent);
        let scaled: Vec<f64> = ticks.iter().map(|t| t / scale).collect();
        let step = scaled
            .windows(2)
            .map(|w| (w[1] - w[0]).abs())
            .filter(|d| *d > 0.0)
            .fold(f64::INFINITY, f64::min);
        let decimals = (0..=6)
            .find(|&d| {
                let unit = 10f64.powi(-(d as i32));
                let tolerance = if step.is_finite() { step * 1e-6 } else { 1e-9 };
                scaled
                    .iter()
                    .all(|t| ((t / unit).round() * unit - t).abs() <= tolerance.max(1e-12))
            })
            .unwrap_or(6);
        AxisFormat { decimals, exponent }
    }

    /// The label of tick `v`.
    pub fn label(&self, v: f64) -> String {
        let scaled = v / 10f64.powi(self.exponent);
        fix_negative_zero(&format!("{scaled:.*}", self.decimals))
    }

    /// What the axis title gains: " (×10⁶)", or nothing.
    pub fn title_suffix(&self) -> String {
        if self.exponent == 0 {
            return String::new();
        }
        const SUPER: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
        let mut power = String::new();
        if self.exponent < 0 {
            power.push('⁻');
        }
        for c in self.exponent.unsigned_abs().to_string().chars() {
            power.push(SUPER[c.to_digit(10).unwrap_or(0) as usize]);
        }
        format!(" (×10{power})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn significant_digits_without_trailing_zeros() {
        assert_eq!(significant(17.9, 4), "17.9");
        assert_eq!(significant(0.5, 4), "0.5");
        assert_eq!(significant(22.42413, 4), "22.42");
        assert_eq!(significant(-1344.8013, 4), "-1345");
        assert_eq!(significant(0.045213, 3), "0.0452");
        assert_eq!(significant(1500000.0, 4), "1500000");
        assert_eq!(significant(4.687e17, 4), "4.687e17");
        assert_eq!(significant(-0.00001, 3), "-1e-5");
        assert_eq!(significant(f64::NAN, 3), "-");
        assert_eq!(significant(-0.0, 3), "0");
    }

    #[test]
    fn an_interval_shares_its_decimals() {
        assert_eq!(
            interval(22.4241, 22.1655, 22.6828),
            ["22.42", "22.17", "22.68"]
        );
        assert_eq!(
            interval(-1344.8013, -1351.1407, -1338.462),
            ["-1344.8", "-1351.1", "-1338.5"]
        );
        assert_eq!(
            interval(13.0499, 13.0499, 13.0499),
            ["13.0", "13.0", "13.0"]
        );
        assert_eq!(interval(0.0, 0.0, 0.0), ["0", "0", "0"]);
        assert_eq!(interval(3.6, 3.5884, 3.6116), ["3.600", "3.588", "3.612"]);
    }

    #[test]
    fn keys_lose_float_noise_only() {
        assert_eq!(key("0.30000000000000004"), "0.3");
        assert_eq!(key("0.14906161542062052"), "0.149062");
        assert_eq!(key("67079"), "67079");
        assert_eq!(key("chrome-push"), "chrome-push");
        assert_eq!(key("0.05"), "0.05");
    }

    #[test]
    fn one_format_per_axis() {
        let f = AxisFormat::for_ticks(&[0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0]);
        assert_eq!(f.decimals, 2);
        assert_eq!(f.label(1.0), "1.00");
        assert_eq!(f.label(0.95), "0.95");
        let f = AxisFormat::for_ticks(&[10.0, 20.0, 30.0]);
        assert_eq!((f.decimals, f.label(20.0)), (0, "20".to_string()));
        let f = AxisFormat::for_ticks(&[800000.0, 900000.0, 1000000.0, 1100000.0]);
        assert_eq!(f.exponent, 6);
        assert_eq!(f.label(900000.0), "0.9");
        assert_eq!(f.label(1100000.0), "1.1");
        assert_eq!(f.title_suffix(), " (×10⁶)");
        let f = AxisFormat::for_ticks(&[-0.2, 0.0, 0.2]);
        assert_eq!(f.label(0.0), "0.0");
        assert_eq!(AxisFormat::for_ticks(&[]).decimals, 0);
    }
}
