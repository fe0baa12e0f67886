//! exhibit: a folder of sanitized benchmark-campaign artifacts in, a verified
//! static publication out.
//!
//! The pipeline, one stage per module, data flowing one way (the stages,
//! the value each hands the next and where state lives: ARCHITECTURE.md):
//! [`campaign`] (find and load campaigns, as loaded) -> [`manifest`] +
//! [`evidence`] (hash and verify every file) -> [`public`] (scan every
//! file, number private values with [`redact`]: the public view of
//! names, metadata and page names) -> [`copies`] (publish every file,
//! redacted, through the [`sink`] before any page: pages show the copies'
//! hashes; [`commit`] ties redacted copies to their originals for key
//! holders) -> [`page`] (Markdown and `exhibit` blocks, reading [`data`]
//! through [`expr`]) -> [`blocks`] (cards, tables, charts, ledgers as
//! HTML/SVG) -> [`render`] (tera templates) -> [`site`] (the build, one
//! file per stage: write, SHA256SUMS, audit.json, rescan, [`gate`]
//! refusing script, swap in; [`single`] for the one-file copy). The names
//! of what a build writes are in [`layout`], which [`verify`], [`seal`]
//! and [`serve`] read too; [`verify`] and [`seal`] reuse the evidence
//! stage; [`serve`] owns the [`site::BuildCache`]; [`cli`] sits at the
//! edge.
//!
//! The public API the binary and the fuzz tests use, and nothing more:
//! [`cli::Cli`] and [`cli::run`] (the binary); [`error::Error`] with
//! [`error::Error::describe`], [`error::Error::exit_code`] and
//! [`error::Error::is_broken_pipe`], [`error::Result`], and
//! [`error::InputError`] (the binary's exit path; the fuzz tests judge an
//! error by its kind and the positioned errors in its chain); and the
//! parsers and stages `tests/cli/fuzz.rs` calls in-process:
//! [`campaign::load`], [`manifest::load`],
//! [`manifest::load_file`], [`manifest::parse_json`],
//! [`manifest::parse_sums`], [`manifest::sums_line`] with
//! [`manifest::Format`], [`blocks::parse`] with [`blocks::ParseError`],
//! [`seal::seal`], and [`site::build`] with [`site::BuildOptions`]. The
//! types in their signatures are `pub` too (the compiler requires it; the
//! block specs, `commit::Key` and `verify::Pin` stay unnameable outside,
//! their modules private); of their fields only those the tests read or
//! set are `pub`: `Error`'s variants (their fields with them;
//! `EvidenceFailed` is opaque), `InputError`'s path, line and col,
//! `Manifest::entries`, `Entry`'s path and sha256, and all of `BuildOptions`. Everything else
//! is `pub(crate)` or narrower, and `unreachable_pub` keeps it so.

#![warn(unreachable_pub)]

pub mod blocks;
pub mod campaign;
mod claims;
pub mod cli;
mod commit;
mod copies;
mod data;
pub mod error;
mod evidence;
mod expr;
mod formats;
mod fsx;
mod gate;
mod hash;
mod html;
mod layout;
pub mod manifest;
mod new;
mod page;
mod public;
mod redact;
mod render;
pub mod seal;
mod serve;
mod single;
mod sink;
pub mod site;
mod verify;
