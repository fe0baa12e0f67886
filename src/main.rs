use clap::Parser;
use std::io::Write;
use std::process::ExitCode;

// mimalloc (v2): the build allocates and frees many small strings on both
// cores; glibc's per-thread arenas grow and shrink the heap around them
// (about 15% of a 10,000-page build went to malloc and its page faults).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = match exhibit::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    // What is still buffered is written before exit, its errors seen.
    let done = exhibit::cli::run(cli)
        .and_then(|()| std::io::stdout().flush().map_err(exhibit::error::Error::Os));
    match done {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our output went away (`exhibit verify | head -1`):
        // nothing is wrong and nothing more needs saying, as in ripgrep.
        Err(err) if err.is_broken_pipe() => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("{}", err.describe());
            ExitCode::from(err.exit_code())
        }
    }
}
