//! `perfshape serve`: the demo service, for external load tools.

use perfshape::runtime::DEFAULT_MAX_BLOCKING;

use crate::exit::Exit;

/// Serve every server strategy on a chosen pool, for external load tools (JMeter, k6,
/// oha, wrk): `/blocking?ms=N`, `/async?ms=N`, `/offload?ms=N`,
/// `/mixed?block_ms=N&wait_ms=M`, `/cpu?ms=N`, `/lock?ms=N`, `/health`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Server worker threads.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Server blocking-thread cap.
    #[arg(long, default_value_t = DEFAULT_MAX_BLOCKING)]
    max_blocking: usize,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    bind: std::net::SocketAddr,
    /// Stop after this many seconds (Ctrl-C stops it sooner).
    #[arg(long = "for", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    seconds: u64,
}

impl Args {
    pub(crate) fn run(self) -> perfshape_experiments::Result<Exit> {
        let Args {
            workers,
            max_blocking,
            bind,
            seconds,
        } = self;
        let pool = perfshape::runtime::Pool::new(
            "server",
            perfshape::PoolSettings::new(workers, max_blocking)?,
        )?;
        let server =
            perfshape::runtime::Server::serve_on(pool, perfshape_experiments::demo::app(), bind)?;
        println!(
            "perfshape serving on http://{} (W={workers} B={max_blocking}) for {seconds} s",
            server.addr()
        );
        for route in [
            "blocking?ms=20",
            "async?ms=20",
            "offload?ms=20",
            "mixed?block_ms=10&wait_ms=10",
            "cpu?ms=20",
            "lock?ms=20",
            "health",
        ] {
            println!("  http://{}/{route}", server.addr());
        }
        std::thread::sleep(std::time::Duration::from_secs(seconds));
        println!("accepted {} connections", server.accepted_connections());
        Ok(Exit::Holds)
    }
}
