"""The Claude Code hook guard: caps, confinement and fetch safety enforced by the harness, not
the prompt.

``hooks/hooks.json`` sends every PreToolUse event — every tool — and the PostToolUse events of
WebSearch and Agent to ``deep-research guard`` (:func:`run_guard`). During a research run the
guard admits an allow-list and nothing else:

* Bash: one call of our CLI with literal arguments that its own parser accepts, of a command
  the caller may use (:mod:`.command`, :mod:`.words`, :mod:`.program`);
* writes: the files the current step of ``deep-research next`` names (:mod:`.writes`,
  :mod:`.steps`);
* agents: the plugin's contracts, each with a task ``next`` issued, under the fan-out ceiling,
  fetcher budget and round cap (:mod:`.agents`; the prompts: :mod:`deep_research.plugin.tasks`);
* WebFetch/WebSearch: fetch safety, the run's allow-list and budgets (:mod:`.budgets`);
* reads: a judging agent's (triangulator, verifier, skeptic, CIBER) only inside its brief's
  ``inputs/`` (:mod:`.reads`);
* other tools: those on an explicit list (:mod:`.tools`).

With no run active, fetch safety, the run pointers and our CLI's own rules apply; the rest
passes to the user's permission rules. A run confines only the Claude Code session that started
it (its agents included): another session's calls are decided as with no run active, and
``hooks/guard`` answers most of them in the shell, without starting this guard.

What stays best-effort: the guard decides from the event; Claude Code's sandbox (file-system
and network limits enforced by the OS for Bash) is the boundary beneath it.
"""

from deep_research.plugin.guard.budgets import check_fetch, check_target, spend_fetches
from deep_research.plugin.guard.cliargs import CliParseError, CliReader
from deep_research.plugin.guard.decision import APPROVED_REASON, Decision
from deep_research.plugin.guard.protocol import hook_output, parse_event, run_guard

__all__ = [
    "APPROVED_REASON",
    "CliParseError",
    "CliReader",
    "Decision",
    "check_fetch",
    "check_target",
    "hook_output",
    "parse_event",
    "run_guard",
    "spend_fetches",
]
