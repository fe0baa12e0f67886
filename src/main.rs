use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match exhibit::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match exhibit::cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("{}", exhibit::error::describe(&err));
            ExitCode::from(exhibit::error::exit_code(&err))
        }
    }
}
