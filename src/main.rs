//! The `hookscope` binary: the window (no subcommand) or a headless command.

use clap::Parser;
use hookscope::cli::{self, Cli, Command};
use std::process::ExitCode;

// Many small allocations per call (headers, JSON values) from several threads: mimalloc keeps
// them cheap where glibc's allocator contends.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    use std::io::IsTerminal;
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_max_level(tracing::Level::WARN)
        .event_format(Plain)
        .init();
    let mut cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return refuse_arguments(e),
    };
    if let Err(e) = cli.settle_global_options() {
        print_error(&e);
        return ExitCode::from(2);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            hookscope::say!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The data directory named by the environment, not by a flag: an error that says to give
    // --data-dir says where the one in use came from.
    // The demo's store is a temporary one of its own.
    let data_from_env =
        !cli.demo && !cli.data_dir_given() && hookscope::store::data_dir_from_env().is_some();
    // The same for the API's URL: an error that asks "is --api-url right?" of a URL the
    // environment gave.
    let url_from_env = cli.api_url_from_env();
    let from_env = |e: String| {
        if data_from_env && e.contains("--data-dir") {
            format!(
                "{e}; that directory came from {} (--data-dir overrides it)",
                hookscope::store::DATA_DIR_ENV
            )
        } else if url_from_env && e.contains("--api-url") && !e.contains("came from") {
            format!(
                "{e}; the URL came from {} (--api-url overrides it)",
                hookscope::cli_api::API_URL_ENV
            )
        } else {
            e
        }
    };
    let result = match cli.command {
        None => {
            let opts = hookscope::app::run::WindowOptions {
                data_dir: cli.data.resolve(),
                demo: cli.demo,
                screenshot: cli.screenshot,
            };
            hookscope::app::run::run_window(&runtime, opts)
                .map_err(|e| Failure::Message(e.to_string()))
        }
        Some(Command::Listen(args)) => runtime.block_on(cli::listen(args)).map_err(Failure::from),
        Some(Command::Log(args)) => cli::log(args).map_err(Failure::from),
        Some(Command::Show(args)) => cli::show(args).map_err(Failure::from),
        Some(Command::Schedule(args)) => cli::schedule(args).map_err(Failure::from),
        Some(Command::Webhooks(cmd)) => runtime
            .block_on(hookscope::cli_api::webhooks(cmd))
            .map_err(Failure::from),
        Some(Command::Send(args)) => runtime
            .block_on(hookscope::cli_api::send(args))
            .map_err(Failure::from),
        Some(Command::SendTest(args)) => runtime
            .block_on(hookscope::cli_api::send_test(args))
            .map_err(Failure::from),
        Some(Command::Emulate(args)) => runtime
            .block_on(hookscope::cli_api::emulate(args))
            .map_err(Failure::from),
        Some(Command::Inject(args)) => runtime
            .block_on(hookscope::cli_api::inject(args))
            .map_err(Failure::from),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // `hookscope log --json | head -1`: the reader has all it wanted.
        Err(Failure::ClosedOutput) => ExitCode::SUCCESS,
        Err(Failure::Message(e)) => {
            print_error(&from_env(e));
            ExitCode::FAILURE
        }
        Err(Failure::Usage(e)) => {
            print_error(&from_env(e));
            ExitCode::from(2)
        }
    }
}

/// clap's own refusals quote the argument as given, and a value may hold escape sequences or
/// control characters that must not reach the terminal raw. clap's plain rendering strips
/// whole escape sequences (the error would quote a value the user never typed), so the
/// command line is read again with every argument escaped (`\u{1b}`) and clap's own styling
/// off, and that refusal is printed: the value shows as typed, escaped. Help and version (not
/// errors) go out as clap writes them.
fn refuse_arguments(e: clap::Error) -> ExitCode {
    if !e.use_stderr() {
        // `--help`, `--version`: nothing taken from the user is echoed.
        return match e.print() {
            Ok(()) => ExitCode::SUCCESS,
            Err(w) if w.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
            Err(w) => {
                print_error(&format!("cannot write to the standard output: {w}"));
                ExitCode::FAILURE
            }
        };
    }
    let code = u8::try_from(e.exit_code()).unwrap_or(2);
    match data_dir_misplaced(&e) {
        Some(name) => print_error(&format!(
            "--data-dir does not apply to `hookscope {name}` (it keeps no calls)"
        )),
        None => hookscope::say!("{}", refusal_text(&e)),
    }
    ExitCode::from(code)
}

/// The subcommand a `--data-dir` after it does not apply to (`hookscope emulate --data-dir
/// D`): refused in the words used for it before the subcommand, not as an unknown argument
/// with a usage line of clap's.
fn data_dir_misplaced(e: &clap::Error) -> Option<String> {
    use clap::CommandFactory;
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    if arg != "--data-dir" && !arg.starts_with("--data-dir=") {
        return None;
    }
    // The command line read again with its refusals ignored, for the subcommand clap found
    // (not the first argument that spells one: an option's value may).
    let again = Cli::command()
        .ignore_errors(true)
        .try_get_matches_from(std::env::args_os())
        .ok()?;
    again.subcommand_name().map(str::to_owned)
}

/// The words of clap's refusal `e`, with the arguments it quotes escaped (see
/// [`refuse_arguments`]).
fn refusal_text(e: &clap::Error) -> String {
    use clap::CommandFactory;
    let escaped = std::env::args_os().map(|a| match a.to_str() {
        Some(s) => std::ffi::OsString::from(hookscope::text::escape_control(s)),
        None => a,
    });
    let plain = Cli::command()
        .styles(clap::builder::Styles::plain())
        .try_get_matches_from(escaped);
    let text = match plain {
        // The same refusal, of the escaped arguments: its text holds no styling of clap's.
        Err(again) if again.kind() == e.kind() => again.render().ansi().to_string(),
        // Escaping made the line mean something else: clap's plain words (sequences dropped).
        _ => e.render().to_string(),
    };
    let safe: Vec<String> = text
        .trim_end()
        .lines()
        .map(hookscope::text::escape_control)
        .collect();
    safe.join("\n")
}

/// An error may quote what a service or a file said: never raw to the terminal.
fn print_error(e: &str) {
    let safe: Vec<String> = e.lines().map(hookscope::text::escape_control).collect();
    hookscope::say!("error: {}", safe.join("\n"));
}

/// How a command failed: with a message for the user, or because its output was closed.
enum Failure {
    ClosedOutput,
    Message(String),
    /// Flags that cannot be used together (exit status 2, as for one refused by itself).
    Usage(String),
}

impl From<cli::CliError> for Failure {
    fn from(e: cli::CliError) -> Self {
        if e.is_closed_output() {
            Failure::ClosedOutput
        } else if e.is_usage() {
            Failure::Usage(e.to_string())
        } else {
            Failure::Message(e.to_string())
        }
    }
}

impl From<hookscope::cli_api::ApiCliError> for Failure {
    fn from(e: hookscope::cli_api::ApiCliError) -> Self {
        if e.is_closed_output() {
            Failure::ClosedOutput
        } else if e.is_usage() {
            Failure::Usage(e.to_string())
        } else {
            Failure::Message(e.to_string())
        }
    }
}

/// Hookscope's own warnings and errors, on stderr as everything else it says there:
/// `warning: …`, `error: …` (they had come with a timestamp and a module path,
/// `2026-11-25T01:02:03Z  WARN hookscope::store: …`, unlike every other line).
struct Plain;

impl<S, N> tracing_subscriber::fmt::FormatEvent<S, N> for Plain
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    N: for<'a> tracing_subscriber::fmt::FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &tracing_subscriber::fmt::FmtContext<'_, S, N>,
        mut writer: tracing_subscriber::fmt::format::Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        let meta = event.metadata();
        let level = if *meta.level() == tracing::Level::ERROR {
            "error"
        } else {
            "warning"
        };
        write!(writer, "{level}: ")?;
        // A library's own (hyper's, say) says whose it is: it is not Hookscope speaking.
        if !meta.target().starts_with("hookscope") {
            write!(writer, "{}: ", meta.target())?;
        }
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

#[cfg(test)]
mod tests {
    use super::Plain;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| std::io::Error::other("poisoned"))?
                .extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn warnings_and_errors_read_as_every_other_line_on_stderr() {
        let out = Captured::default();
        let writer = out.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .event_format(Plain)
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!("folding the log into the database failed: {}", "disk full");
            tracing::error!("calls cannot be stored");
            tracing::warn!(target: "hyper::proto", "connection error");
        });
        let said = String::from_utf8(out.0.lock().map(|v| v.clone()).unwrap_or_default());
        assert_eq!(
            said.as_deref(),
            Ok(
                "warning: folding the log into the database failed: disk full\nerror: calls cannot be stored\nwarning: hyper::proto: connection error\n"
            )
        );
    }
}
