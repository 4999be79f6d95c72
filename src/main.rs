//! The `hookscope` binary: the window (no subcommand) or a headless command.

use clap::{CommandFactory, Parser};
use hookscope::cli::{self, Cli, Command};
use std::process::ExitCode;

// Many small allocations per call (headers, JSON values) from several threads: mimalloc keeps
// them cheap where glibc's allocator contends.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing::Level::WARN)
        .init();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = match cli.command {
        None => {
            // The window arrives with the desktop app; until then, say what there is.
            let _ = Cli::command().print_help();
            return ExitCode::SUCCESS;
        }
        Some(Command::Listen(args)) => runtime.block_on(cli::listen(args)),
        Some(Command::Log(args)) => cli::log(args),
        Some(Command::Show(args)) => cli::show(args),
        Some(Command::Schedule(args)) => cli::schedule(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
