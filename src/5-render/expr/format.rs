//! Number formats: `[+][,][.N][SUFFIX][ from UNIT]`. The suffix is
//! appended verbatim (`%`, ` tok/s`); ` from UNIT` scales the value from the
//! data's unit to the unit the suffix names (`.1 ms from s`).

/// `[+][,][.N][SUFFIX]`, optionally scaled.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Format {
    pub(crate) sign: bool,
    pub(crate) thousands: bool,
    pub(crate) precision: Option<usize>,
    pub(crate) suffix: String,
    /// Multiplier applied before formatting (1 when absent).
    pub(crate) scale: Option<f64>,
}

/// Units a format can convert between: (name, dimension, size in the
/// dimension's base unit).
const UNITS: &[(&str, &str, f64)] = &[
    ("ns", "time", 1e-9),
    ("us", "time", 1e-6),
    ("µs", "time", 1e-6),
    ("ms", "time", 1e-3),
    ("s", "time", 1.0),
    ("min", "time", 60.0),
    ("h", "time", 3600.0),
    ("B", "bytes", 1.0),
    ("kB", "bytes", 1e3),
    ("MB", "bytes", 1e6),
    ("GB", "bytes", 1e9),
    ("TB", "bytes", 1e12),
    ("KiB", "bytes", 1024.0),
    ("MiB", "bytes", 1_048_576.0),
    ("GiB", "bytes", 1_073_741_824.0),
    ("TiB", "bytes", 1_099_511_627_776.0),
    ("B/s", "bytes/s", 1.0),
    ("kB/s", "bytes/s", 1e3),
    ("MB/s", "bytes/s", 1e6),
    ("GB/s", "bytes/s", 1e9),
    ("KiB/s", "bytes/s", 1024.0),
    ("MiB/s", "bytes/s", 1_048_576.0),
    ("GiB/s", "bytes/s", 1_073_741_824.0),
    ("fraction", "ratio", 1.0),
    ("%", "ratio", 0.01),
];

fn unit(name: &str) -> Option<(&'static str, f64)> {
    UNITS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, d, f)| (*d, *f))
}

/// ` from UNIT` at the end of a suffix: the factor from UNIT to the unit
/// the rest of the suffix ends with. A suffix without a known unit after
/// ` from ` is verbatim text, as before scaling existed.
fn scaling(spec: &str, suffix: &str) -> Result<Option<(String, f64)>, String> {
    let Some((shown, from)) = suffix.rsplit_once(" from ") else {
        return Ok(None);
    };
    let Some((from_dim, from_size)) = unit(from.trim()) else {
        return Ok(None);
    };
    let to = shown.split_whitespace().last().unwrap_or("");
    match unit(to) {
        Some((dim, size)) if dim == from_dim => Ok(Some((shown.to_string(), from_size / size))),
        _ => Err(format!(
            "format `{spec}`: cannot show `{}` in `{to}`: the suffix must end with a unit of the same kind ({})",
            from.trim(),
            UNITS
                .iter()
                .filter(|(_, d, _)| *d == from_dim)
                .map(|(n, _, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

impl Format {
    pub(crate) fn parse(s: &str) -> Result<Format, String> {
        let mut f = Format::default();
        let mut rest = s;
        if let Some(r) = rest.strip_prefix('+') {
            f.sign = true;
            rest = r;
        }
        if let Some(r) = rest.strip_prefix(',') {
            f.thousands = true;
            rest = r;
        }
        if let Some(r) = rest.strip_prefix('.') {
            let digits = r.chars().take_while(char::is_ascii_digit).count();
            if digits == 0 {
                return Err(format!(
                    "format `{s}`: `.` must be followed by the number of decimals"
                ));
            }
            let n: usize = r[..digits]
                .parse()
                .map_err(|_| format!("format `{s}`: too many decimals"))?;
            if n > 12 {
                return Err(format!("format `{s}`: at most 12 decimals"));
            }
            f.precision = Some(n);
            rest = &r[digits..];
        }
        match scaling(s, rest)? {
            Some((suffix, scale)) => {
                f.suffix = suffix;
                f.scale = Some(scale);
            }
            None => f.suffix = rest.to_string(),
        }
        Ok(f)
    }

    pub(crate) fn apply(&self, v: f64) -> String {
        let v = v * self.scale.unwrap_or(1.0);
        let body = match self.precision {
            Some(p) => format!("{:.*}", p, v.abs()),
            None => shortest(v.abs()),
        };
        let body = if self.thousands {
            group_thousands(&body)
        } else {
            body
        };
        // A value that rounds to zero has no direction: `+0.0`, never `-0.0`.
        let zero = body.bytes().all(|b| matches!(b, b'0' | b'.' | b','));
        let sign = if self.sign && (zero || v > 0.0) {
            "+"
        } else if v < 0.0 && !zero {
            "-"
        } else {
            ""
        };
        format!("{sign}{body}{}", self.suffix)
    }
}

/// A number as Rust writes it shortest; integers without `.0`.
pub(crate) fn shortest(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn group_thousands(s: &str) -> String {
    let (int, frac) = match s.find('.') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    let mut out = String::with_capacity(s.len() + int.len() / 3);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out.push_str(frac);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let f = |s: &str, v: f64| Format::parse(s).unwrap().apply(v);
        assert_eq!(f("+.1%", 32.97), "+33.0%");
        assert_eq!(f(",.0", 16729.0), "16,729");
        assert_eq!(f(",", 1234567.5), "1,234,567.5");
        assert_eq!(f(".2 tok/s", 149.0234), "149.02 tok/s");
        assert_eq!(f("+.1", -2.26), "-2.3");
        assert_eq!(f("+.1", -0.01), "+0.0");
        assert_eq!(f("+.1%", 0.0), "+0.0%");
        assert_eq!(f(".1", -0.01), "0.0");
        assert_eq!(f("", 300.0), "300");
        assert!(Format::parse(".x").is_err());
    }

    #[test]
    fn scaled() {
        let f = |s: &str, v: f64| Format::parse(s).unwrap().apply(v);
        assert_eq!(f(".1 ms from s", 0.12345), "123.5 ms");
        assert_eq!(f(",.1 MB/s from B/s", 104_857_600.0), "104.9 MB/s");
        assert_eq!(f(".1% from fraction", 0.3297), "33.0%");
        assert_eq!(f(".0 MiB from B", 2_097_152.0), "2 MiB");
        // not a unit after `from`: verbatim, as formats always were
        assert_eq!(f(".1 from baseline", 2.0), "2.0 from baseline");
        assert!(Format::parse(".1 tok/s from s").is_err());
        assert!(Format::parse(".1 MB from s").is_err());
    }
}
