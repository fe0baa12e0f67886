//! A campaign's consistency checks (campaign.json's `checks`): each
//! compares two values read from the verified data, or the ledger, once
//! every page is rendered. One that fails stops the build (exit 1).

use crate::campaign::{Campaign, Check, Operand, Relation, META_NAME};
use crate::error::Result;
use crate::error::{EvidenceFailed, InputError};
use crate::page::{RefError, Refs};
use serde::Serialize;

/// A check as audit.json records it: both sides as written and as read.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Outcome {
    pub(crate) name: String,
    pub(crate) relation: Relation,
    pub(crate) left: Side,
    pub(crate) right: Side,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tolerance: Option<f64>,
    pub(crate) holds: bool,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Side {
    /// The operand as published (a reference, or a number).
    pub(crate) written: String,
    pub(crate) value: f64,
}

/// Every check of `c` read through `refs` (`public` are the checks as
/// published: their references redacted). All must hold; the failing ones
/// are reported together.
pub(crate) fn run(c: &Campaign, public: &[Check], refs: &Refs) -> Result<Vec<Outcome>> {
    let mut outcomes = Vec::with_capacity(public.len());
    for (check, original) in public.iter().zip(&c.meta.checks) {
        let Some((relation, [a, b])) = check.relation() else {
            continue; // refused when campaign.json was loaded
        };
        let originals = original.relation().map(|(_, o)| o);
        let side = |o: &Operand, k: usize| {
            let written = originals.map_or(o, |w| &w[k]);
            read(c, &check.name, o, written, refs)
        };
        let (left, right) = (side(a, 0)?, side(b, 1)?);
        let tolerance = check.tolerance.unwrap_or(0.0);
        outcomes.push(Outcome {
            name: check.name.clone(),
            relation,
            holds: relation.holds(left.value, right.value, tolerance),
            left,
            right,
            tolerance: check.tolerance,
        });
    }
    let failed: Vec<String> = outcomes
        .iter()
        .filter(|o| !o.holds)
        .map(|o| {
            let within = o
                .tolerance
                .map_or(String::new(), |t| format!(" (within {t})"));
            format!(
                "check `{}` failed: {} is {}, which is not {} {} = {}{within}",
                o.name,
                o.left.written,
                number(o.left.value),
                o.relation.words(),
                o.right.written,
                number(o.right.value),
            )
        })
        .collect();
    if !failed.is_empty() {
        let report = format!(
            "campaign `{}` ({}): {}",
            c.meta.id,
            c.path(META_NAME).display(),
            failed.join("; ")
        );
        return Err(EvidenceFailed { report }.into());
    }
    Ok(outcomes)
}

/// A number as a reader would write it (no `.0` on whole numbers).
fn number(v: f64) -> String {
    crate::expr::Scalar::computed(v).to_string()
}

/// One side of check `name`: its number, or an error at the operand in
/// campaign.json (`written` is the operand as written there).
fn read(c: &Campaign, name: &str, o: &Operand, written: &Operand, refs: &Refs) -> Result<Side> {
    let spec = match o {
        Operand::Number(n) => {
            return Ok(Side {
                written: number(*n),
                value: *n,
            })
        }
        Operand::Reference(r) => r,
    };
    let at = |m: String| -> crate::error::Error {
        let raw = match written {
            Operand::Reference(w) => w.as_str(),
            Operand::Number(_) => spec.as_str(),
        };
        let offset = crate::campaign::value_offset(&c.text, "checks", raw);
        InputError::at_offset(
            &c.path(META_NAME),
            &c.text,
            offset,
            format!("check `{name}`: {m}"),
        )
        .into()
    };
    let inner = spec.strip_prefix('=').unwrap_or(spec);
    let resolved = refs.resolve(inner).map_err(|e| match e {
        RefError::Here(m) => at(m),
        RefError::Positioned(e) => e,
    })?;
    let value = resolved
        .number
        .ok_or_else(|| at(format!("`{spec}` is `{}`, not a number", resolved.value)))?;
    Ok(Side {
        written: spec.clone(),
        value,
    })
}
