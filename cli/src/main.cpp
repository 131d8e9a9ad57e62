// collsim: the command-line front end. Exit codes: 0 success, 1 failure while running, 2 bad usage
// or bad input. Every error is one line on stderr, prefixed "collsim: " unless it already names a
// file position.

#include "commands.hpp"

#include "collsim/core/errors.hpp"
#include "collsim/distributed/session.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

namespace {

int run_command(int argc, char** argv) {
  CLI::App app{"collsim: a collective-communication simulator and cost-model explorer.\n"
               "Generates collective algorithms as schedules, times them on topologies of real "
               "hardware, and reports latency, algorithm bandwidth and bus bandwidth."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "collsim 0.1.0");
  collsim::cli::add_run(app);
  collsim::cli::add_sim(app);
  collsim::cli::add_algorithms(app);
  collsim::cli::add_stacks(app);
  collsim::cli::add_schedule(app);
  collsim::cli::add_import(app);
  collsim::cli::add_verify(app);
  collsim::cli::add_topology(app);
  collsim::cli::add_ingest(app);
  collsim::cli::add_validate(app);
  collsim::cli::add_explain(app);
  collsim::cli::add_calibrate(app);
  collsim::cli::add_tune(app);
  collsim::cli::add_check(app);
  collsim::cli::add_expect(app);
  collsim::cli::add_workload(app);
  collsim::cli::add_compare(app);
  collsim::cli::add_place(app);
#ifdef COLLSIM_HAVE_CHARTS
  collsim::cli::add_plot(app);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "collsim: " << e.what() << "\nRun 'collsim --help' for usage.\n";
    return 2;
  } catch (const collsim::core::ScenarioError& e) {
    std::cerr << e.what() << '\n';
    return 2;
  } catch (const collsim::core::LogParseError& e) {
    std::cerr << e.what() << '\n';
    return 2;
  } catch (const collsim::core::ScheduleError& e) {
    // A schedule file's error carries its own "file:line:column: error: " (parse_schedule,
    // read_goal); a check's summary does not.
    const std::string what = e.what();
    std::cerr << (what.find(": error: ") != std::string::npos ? "" : "collsim: error: ") << what
              << '\n';
    return e.is_input_error() ? 2 : 1;
  } catch (const collsim::core::Error& e) {
    std::cerr << "collsim: error: " << e.what() << '\n';
    return e.is_input_error() ? 2 : 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "collsim: error: out of memory (try fewer ranks or a smaller size)\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "collsim: internal error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  // Under mpirun or srun: one rank of a job that shares the sweeps (docs/distributed.md).
  collsim::distributed::Session session(argc, argv);
  return session.finish(run_command(argc, argv));
}
