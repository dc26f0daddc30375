//! `perfshape locust FIXTURE --host URL`: a fixture's rows on Locust, decided.

use std::path::PathBuf;

use perfshape_experiments::external::{LocustRun, locustfile};

use super::files::write;
use super::schedule::{ScheduleArgs, announce, judge};
use crate::exit::Exit;

/// Run a fixture's rows on Locust — a master and local worker processes, headless,
/// bounded in time — and judge its claims from Locust's statistics; or, with
/// --print-commands, write the locustfile and print the commands to run the master and
/// workers on other machines.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The fixture, e.g. fixtures/seed-004-jmeter-endpoints.toml.
    fixture: PathBuf,
    /// The service to load, http://host:port (only the host you name).
    #[arg(long)]
    host: String,
    /// Local worker processes (0: one Locust process, no master).
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Where the locustfile, logs and statistics go.
    #[arg(long, default_value = "target/perfshape/locust")]
    dir: PathBuf,
    /// Write the locustfile and print the master and worker commands; run nothing.
    #[arg(long)]
    print_commands: bool,
    /// With --print-commands: the address the master's bus listens on, which the
    /// workers on other machines connect to (loopback unless you name one).
    #[arg(long, default_value = "127.0.0.1")]
    master_bind: String,
    /// Also judge each row against the model (the host is `perfshape serve` on the
    /// fixture's pool).
    #[arg(long)]
    against_model: bool,
    #[command(flatten)]
    schedule: ScheduleArgs,
}

impl Args {
    pub(crate) fn run(self) -> perfshape_experiments::Result<Exit> {
        let schedule = self.schedule.schedule(&self.fixture)?;
        if self.print_commands {
            // The commands are for other machines: Locust need not be installed here.
            let run = LocustRun::remote(&self.host, self.workers, &self.dir)?;
            write(&run.locustfile(), &locustfile(&schedule)?)?;
            let (master, worker) = run.remote_commands(&schedule, &self.master_bind);
            println!("# the locustfile: {}", run.locustfile().display());
            println!("# on the master, beside a copy of the locustfile (workers: --workers):");
            println!("{master}");
            println!("# on each worker machine, beside a copy of the locustfile:");
            println!("{worker}");
            println!(
                "# then, with the master's stats.json and this command's schedule flags:\n\
                 perfshape judge {} stats.json",
                self.fixture.display()
            );
            return Ok(Exit::Holds);
        }
        let run = LocustRun::new(&self.host, self.workers, &self.dir)?;
        announce(
            "locust",
            &schedule,
            &format!("{} workers", self.workers),
            &self.host,
        );
        let stats = run.run(&schedule)?;
        judge(&schedule, &stats, self.against_model)
    }
}
