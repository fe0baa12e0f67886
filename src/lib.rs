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

// The folders of src/ list the stages in the order a build runs them;
// each module keeps its short name.

// 0. Shared by every stage: errors, file system, hashes, HTML escaping,
//    the names of what a build writes, audit.json's record lines, the sink
//    every file goes through.
#[path = "0-shared/error.rs"]
pub mod error;
#[path = "0-shared/fsx.rs"]
mod fsx;
#[path = "0-shared/hash.rs"]
mod hash;
#[path = "0-shared/html.rs"]
mod html;
#[path = "0-shared/layout.rs"]
mod layout;
#[path = "0-shared/records.rs"]
mod records;
#[path = "0-shared/sink.rs"]
mod sink;

// 1. Load: campaigns and their manifests, as written.
#[path = "1-load/campaign.rs"]
pub mod campaign;
#[path = "1-load/manifest.rs"]
pub mod manifest;

// 2. Verify: every file hashed and judged.
#[path = "2-verify/evidence.rs"]
mod evidence;
#[path = "2-verify/listing.rs"]
mod listing;

// 3. Public view: every file scanned, private values numbered.
#[path = "3-public/public.rs"]
mod public;
#[path = "3-public/redact/mod.rs"]
mod redact;

// 4. Copy: every file published, redacted, with its commitment.
#[path = "4-copy/commit.rs"]
mod commit;
#[path = "4-copy/copies.rs"]
mod copies;
#[path = "4-copy/stream.rs"]
mod stream;

// 5. Render: pages and blocks from the data, typed figures checked.
#[path = "5-render/blocks/mod.rs"]
pub mod blocks;
#[path = "5-render/claims/mod.rs"]
mod claims;
#[path = "5-render/data.rs"]
mod data;
#[path = "5-render/expr/mod.rs"]
mod expr;
#[path = "5-render/formats/mod.rs"]
mod formats;
#[path = "5-render/page/mod.rs"]
mod page;
#[path = "5-render/render.rs"]
mod render;

// 6. Site: the build's stages run in order, written, rescanned, gated,
//    swapped in.
#[path = "6-site/gate.rs"]
mod gate;
#[path = "6-site/single.rs"]
mod single;
#[path = "6-site/site/mod.rs"]
pub mod site;

// 7. Commands beside `build`, and the command line.
#[path = "7-commands/cli.rs"]
pub mod cli;
#[path = "7-commands/new.rs"]
mod new;
#[path = "7-commands/seal.rs"]
pub mod seal;
#[path = "7-commands/serve/mod.rs"]
mod serve;
#[path = "7-commands/verify.rs"]
mod verify;
