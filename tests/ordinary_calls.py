"""A hundred tool calls of an ordinary coding session, as Claude Code sends them to PreToolUse.

The events are written as Claude Code 2.1.197 and 2.1.332 write them (seen in both): compact
JSON, ``session_id`` first, then the transcript, ``cwd``, prompt id, permission mode, a
subagent's ``agent_id``/``agent_type``, effort, the event's and tool's names, ``tool_input`` and
``tool_use_id``. The calls read, edit and write a project's files, run git, tests and builds,
search the web, keep a to-do list and dispatch the built-in Explore subagent; some come from
that subagent, a few from another plugin's MCP server. None of them names this plugin.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

Call = tuple[str, dict[str, Any]]

_FILES = [
    "src/app/main.py",
    "src/app/models.py",
    "src/app/views.py",
    "tests/test_views.py",
    "README.md",
    "pyproject.toml",
    "package.json",
    "src/components/Button.tsx",
    "docs/setup.md",
    ".github/workflows/ci.yml",
]
_COMMANDS = [
    "git status",
    "git diff --stat",
    "git log --oneline -20",
    'git add -A && git commit -m "Fix the login redirect"',
    "git checkout -b fix/login",
    "git stash list",
    "git rev-parse HEAD",
    "ls -la",
    "ls src/app",
    "pytest -q tests/test_views.py",
    "python -m pytest -x -k login",
    "npm test -- --watch=false",
    "npm run build",
    "make lint",
    "cat pyproject.toml | head -40",
    "grep -rn 'TODO' src | wc -l",
    "find . -name '*.py' -newer setup.cfg",
    "docker compose ps",
    "python -c 'import sys; print(sys.version)'",
    "curl -sS https://api.github.com/repos/octo/demo | jq .stargazers_count",
    "cd src && ls",
    "echo $PATH",
    "uv pip list | grep requests",
    "rm -rf build/ dist/",
    "kill %1",
    "git push origin fix/login",
    "npx tsc --noEmit",
    "python manage.py migrate",
]
_PATTERNS = [
    "def login",
    "TODO",
    "import requests",
    "class .*View",
    "useState",
    "FIXME",
    "print(",
    "SECRET_KEY",
]
_GLOBS = [
    "**/*.py",
    "src/**/*.tsx",
    "*.md",
    "tests/**/test_*.py",
    "**/package.json",
    "docs/*",
    "**/*.yml",
    "src/app/*",
]


def ordinary_calls() -> list[Call]:
    """The hundred calls, in a fixed order."""
    calls: list[Call] = []
    calls += [("Read", {"file_path": f"/home/dev/shop/{name}"}) for name in _FILES]
    calls += [("Read", {"file_path": f"/home/dev/shop/{_FILES[0]}", "offset": 40, "limit": 80})]
    calls += [
        (
            "Edit",
            {"file_path": f"/home/dev/shop/{name}", "old_string": "x = 1", "new_string": "x = 2"},
        )
        for name in _FILES[:8]
    ]
    calls += [
        (
            "MultiEdit",
            {
                "file_path": "/home/dev/shop/src/app/views.py",
                "edits": [
                    {"old_string": "a", "new_string": "b"},
                    {"old_string": "c", "new_string": "d"},
                ],
            },
        )
    ]
    calls += [
        (
            "Write",
            {
                "file_path": f"/home/dev/shop/notes/{n}.md",
                "content": f'# Note {n}\n\nText with "quotes" and a\nnewline.\n',
            },
        )
        for n in range(8)
    ]
    calls += [("Bash", {"command": command, "description": "Run it"}) for command in _COMMANDS]
    calls += [
        ("Grep", {"pattern": pattern, "path": "/home/dev/shop", "output_mode": "content"})
        for pattern in _PATTERNS
    ]
    calls += [("Glob", {"pattern": pattern}) for pattern in _GLOBS]
    calls += [("LS", {"path": "/home/dev/shop/src"})]
    calls += [
        ("WebSearch", {"query": query})
        for query in (
            "django login redirect loop",
            "python 3.13 release notes",
            "react useEffect cleanup",
            "pytest fixtures scope",
            "docker compose healthcheck",
        )
    ]
    calls += [
        (
            "TodoWrite",
            {
                "todos": [
                    {"content": f"Step {n}", "status": "pending", "activeForm": f"Doing step {n}"}
                ]
            },
        )
        for n in range(4)
    ]
    calls += [
        ("TaskCreate", {"subject": "Refactor views", "description": "split views.py"}),
        ("TaskList", {}),
    ]
    calls += [
        (
            "NotebookEdit",
            {
                "notebook_path": "/home/dev/shop/analysis.ipynb",
                "new_source": "df.head()",
                "cell_id": "c1",
            },
        )
    ]
    calls += [("BashOutput", {"bash_id": "bash_1"}), ("KillShell", {"shell_id": "bash_1"})]
    calls += [
        ("Skill", {"skill": "frontend-design:frontend-design"}),
        (
            "AskUserQuestion",
            {
                "questions": [
                    {
                        "question": "Which port?",
                        "header": "Port",
                        "options": [{"label": "8000", "description": "default"}],
                        "multiSelect": False,
                    }
                ]
            },
        ),
    ]
    calls += [
        ("mcp__github__list_pull_requests", {"owner": "octo", "repo": "demo", "state": "open"}),
        ("mcp__github__get_issue", {"owner": "octo", "repo": "demo", "issue_number": 42}),
        ("mcp__sentry__search_issues", {"query": "is:unresolved login"}),
    ]
    calls += [("ExitPlanMode", {"plan": "1. Fix the redirect\n2. Add a test"})]
    calls += [("ToolSearch", {"query": "select:WebFetch"})]
    calls += [
        (
            "Agent",
            {"description": "Find the redirect", "prompt": prompt, "subagent_type": "Explore"},
        )
        for prompt in ("Where is the login redirect set?", "Which views call reverse()?")
    ]
    return calls


#: The calls the built-in Explore subagent makes in the same session (agent id and type set).
SUBAGENT_CALLS: list[Call] = [
    ("Read", {"file_path": "/home/dev/shop/src/app/urls.py"}),
    ("Grep", {"pattern": "redirect", "path": "/home/dev/shop/src"}),
    ("Glob", {"pattern": "**/settings*.py"}),
    ("Bash", {"command": "git log -p -3 -- src/app/views.py", "description": "history"}),
]


def hook_event(
    tool: str,
    tool_input: dict[str, Any],
    session_id: str,
    cwd: Path,
    *,
    agent: str | None = None,
    use_id: str = "toolu_01",
) -> str:
    """One PreToolUse event, byte for byte in Claude Code's layout."""
    body: dict[str, Any] = {
        "session_id": session_id,
        "transcript_path": f"/home/dev/.claude/projects/-home-dev-shop/{session_id}.jsonl",
        "cwd": str(cwd),
        "prompt_id": "c6d7086a-c57c-4096-a7ab-f907e50d7e15",
        "permission_mode": "default",
    }
    if agent is not None:
        body |= {"agent_id": agent, "agent_type": "Explore"}
    body |= {
        "effort": {"level": "high"},
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": use_id,
    }
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


def session_events(session_id: str, cwd: Path) -> list[str]:
    """The hundred calls as one session sends them: its own, then its Explore subagent's."""
    own = [
        hook_event(t, i, session_id, cwd, use_id=f"toolu_{n:03}")
        for n, (t, i) in enumerate(ordinary_calls())
    ]
    sub = [hook_event(t, i, session_id, cwd, agent="a50f9be4679b7a3a4") for t, i in SUBAGENT_CALLS]
    return own + sub
