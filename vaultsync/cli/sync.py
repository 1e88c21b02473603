"""``vaultsync sync``: bring the derived index up to HEAD (what the git hooks run).

Typed by a user it waits for a running sync, then syncs itself, so a search right
after it sees HEAD. From a hook it never waits (the running sync is asked to go
again) and is stopped after ``VAULTSYNC_SYNC_TIMEOUT`` seconds (default 900),
which ``vaultsync status`` then reports as the last error.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from vaultsync.git import no_git_env
from vaultsync.logs import rotate

if TYPE_CHECKING:
    from vaultsync.index.layout import IndexLayout

HOOK_TIMEOUT_S = 900
REPLAY_WAIT_S = 1800  # an interactive rebase may stop for edits this long before the waiter gives up


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__)
    p.add_argument("--hook", metavar="NAME", help="called from a git hook (post-commit, post-merge, ...): never fails")
    p.add_argument("--background", action="store_true", help="start the sync detached and return at once")
    p.add_argument("--quiet", action="store_true", help="print nothing (errors still go to the index log)")
    p.add_argument("--wait", type=float, default=None,
                   help="seconds to wait for a running sync (default: as long as it takes; 0 from a hook, "
                        "which asks the running sync to go again)")
    p.add_argument("--after-replay", action="store_true", help=argparse.SUPPRESS)  # the shim's waiter (GH-02)
    p.add_argument("hook_args", nargs="*", help=argparse.SUPPRESS)
    p.set_defaults(run=run)


def spawn_detached(args: list[str], log: Path) -> None:
    """Start ``vaultsync ARGS`` in its own session with output appended to ``log`` (GH-10)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    rotate(log)
    with open(log, "ab") as out, open(os.devnull, "rb") as devnull:
        kwargs: dict[str, object] = {"stdin": devnull, "stdout": out, "stderr": out, "close_fds": True}
        if os.name == "posix":
            kwargs["start_new_session"] = True
        else:  # pragma: no cover - Windows
            kwargs["creationflags"] = 0x00000008 | 0x00000200  # DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP
        # the hook's GIT_DIR, GIT_INDEX_FILE, ... must not reach the sync; PYTHONSAFEPATH: `-m` run in the
        # worktree must not import a committed vaultsync/ package before the installed one (ADR-0032)
        kwargs["env"] = no_git_env(PYTHONSAFEPATH="1")
        subprocess.Popen([sys.executable, "-m", "vaultsync", *args], **kwargs)  # noqa: S603


def framework_hook() -> str | None:
    """Which git hook the pre-commit framework is running us from, read from its environment."""
    if os.environ.get("PRE_COMMIT_REWRITE_COMMAND"):
        return "post-rewrite"
    if os.environ.get("PRE_COMMIT_CHECKOUT_TYPE"):
        return "post-checkout"
    if os.environ.get("PRE_COMMIT_IS_SQUASH_MERGE"):
        return "post-merge"
    if os.environ.get("PRE_COMMIT") or os.environ.get("PRE_COMMIT_HOME"):
        return "post-commit"
    return None


def run(args: argparse.Namespace) -> int:
    from vaultsync.vault.config import ConfigError

    hook_mode = bool(args.hook or args.background)
    try:
        return _run(args)
    except Exception as exc:  # a hook never fails git; the error goes to state.json and the log
        if isinstance(exc, ConfigError):  # the committed config is invalid: its line, kept for `vaultsync status`
            said = f"the committed config is invalid: {exc}"
            print(exc if not hook_mode else f"vaultsync sync: error: {said}", file=sys.stderr)
            _record_error(exc, said)
            return 0 if hook_mode else 1
        from vaultsync.cli.common import environment_error

        if (said := environment_error(exc)) is not None:  # a read-only or full index folder: said in its words
            print(f"vaultsync sync: error: {said}", file=sys.stderr)
            if not hook_mode:
                return 1
        elif not hook_mode:
            raise
        _record_error(exc, said)
        return 0


def _run(args: argparse.Namespace) -> int:
    from vaultsync.index.fastpath import quick_is_current

    if args.after_replay:
        from vaultsync.git import open_repo

        repo = open_repo(Path.cwd())
        if repo is None or not _waited_for_replay(repo):
            return 0
        args.hook = "post-rewrite"  # the replay is over: sync as its last hook would have
    if not args.background and not getattr(args, "asked_if_current", False) and quick_is_current(Path.cwd()):
        if not args.quiet:
            print("index up-to-date")
        return 0
    from vaultsync.git import open_repo, why_not_opened

    repo = open_repo(Path.cwd())
    if repo is None:
        if args.hook or args.background:
            return 0
        print(f"vaultsync sync: {why_not_opened(Path.cwd())}", file=sys.stderr)
        return 2
    if args.background:
        hook = args.hook or framework_hook()
        forwarded = ["sync", "--quiet"] + (["--hook", hook] if hook else ["--wait", "0"])
        if os.environ.get("PRE_COMMIT_CHECKOUT_TYPE") == "0":
            return 0  # pre-commit framework, file checkout: HEAD did not move
        spawn_detached(forwarded, Path(repo.path) / "vaultsync" / "hook.log")
        return 0
    from vaultsync.index.layout import layout_for
    from vaultsync.index.lock import SyncLock, running_sync
    from vaultsync.index.state import write_state
    from vaultsync.index.sync import replay_in_progress, sync

    layout = layout_for(repo)
    if args.hook:
        rotate(layout.log)  # the shims append to hook.log: keep it bounded
    if args.hook and replay_in_progress(repo, args.hook):
        SyncLock(layout.lock, layout.dirty).mark_dirty()  # post-rewrite, the last pick or patch syncs (GH-02)
        return 0
    if args.hook == "post-checkout" and args.hook_args[2:3] == ["0"]:
        return 0  # a file checkout: HEAD did not move
    wait = args.wait if args.wait is not None else (0.0 if args.hook else -1.0)
    if wait != 0 and not args.quiet and (owner := running_sync(layout.lock)) is not None:
        print(f"vaultsync sync: waiting for the running sync (pid {owner.pid})", file=sys.stderr)
    if args.hook:
        _arm_timeout(float(os.environ.get("VAULTSYNC_SYNC_TIMEOUT") or HOOK_TIMEOUT_S), layout)
    started = time.time()
    try:
        # no index here at all and a team remote configured: start from its snapshot (ADR-0071); any
        # failure is a warning and the sync below builds locally
        pulled = _bootstrap(repo) if not layout.sqlite.exists() else []
        report = sync(repo, progress=sys.stderr.isatty() and not args.quiet, wait=wait, hook=args.hook)
        report.warnings[:0] = pulled
    finally:
        _arm_timeout(0, layout)
    if report.status != "busy":
        # "up-to-date" read no note: the warnings of the sync that indexed this tree still hold
        kept = {} if report.status == "up-to-date" else {"warnings": report.warnings}
        write_state(layout, last_run=started, last_status=report.status, last_commit=report.commit,
                    last_seconds=round(report.seconds, 3), last_error=None, **kept)
    for warning in report.warnings:
        print(f"vaultsync sync: warning: {warning}", file=sys.stderr)
    if not args.quiet:
        print(report.summary())
    return 0


def _waited_for_replay(repo) -> bool:  # type: ignore[no-untyped-def]
    """As this worktree's one replay waiter (the shim starts it while git replays commits), wait until
    the replay has been over for a second, at most ``REPLAY_WAIT_S``; False when another waiter is
    already waiting (GH-02: a rebase that only fast-forwards, or drops every pick, runs no hook after)."""
    from vaultsync.index.sync import replay_active

    folder = Path(repo.path) / "vaultsync"
    folder.mkdir(exist_ok=True)
    with open(folder / "replay-wait.lock", "w") as post:
        try:
            import fcntl

            fcntl.flock(post, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:  # pragma: no cover - Windows: no second waiter to keep away
            pass
        except OSError:
            return False
        pid_file = folder / "replay-wait.pid"
        pid_file.write_text(f"{os.getpid()}\n")  # the shim starts no other waiter while this one lives
        deadline, calm = time.monotonic() + REPLAY_WAIT_S, 0
        while calm < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
            calm = 0 if replay_active(repo) else calm + 1
        pid_file.unlink(missing_ok=True)
    return True


def _bootstrap(repo) -> list[str]:  # type: ignore[no-untyped-def]
    """Warnings of starting from the team's snapshot (nothing when no remote is configured)."""
    from vaultsync.index.pull import bootstrap

    report, warnings = bootstrap(repo)
    if report is not None:
        print(f"vaultsync sync: {report.summary()}", file=sys.stderr)
    return warnings


def _arm_timeout(seconds: float, layout: IndexLayout) -> None:
    """End this process after ``seconds`` (0 disarms), the timeout recorded as the last error; POSIX only.

    The process exits from the signal handler (an exception could be swallowed by a finaliser
    running at that moment): the open SQLite transaction is never committed, so readers and
    the next sync see the previous state; the OS drops the lock, and the owner record goes
    first, so ``vaultsync status`` shows the error, not a running sync.
    """
    if not hasattr(signal, "setitimer"):  # pragma: no cover - Windows
        return
    if seconds <= 0:
        signal.setitimer(signal.ITIMER_REAL, 0)
        return

    def expired(signum: int, frame: object) -> None:
        from vaultsync.index.lock import owner_path, read_owner
        from vaultsync.index.progress import describe, read_progress
        from vaultsync.index.state import write_state

        message = f"SyncTimeout: sync timed out after {seconds:g} s (VAULTSYNC_SYNC_TIMEOUT)"
        try:
            try:  # what it embedded is in the cache: the next sync starts from there
                record = read_progress(layout.progress, os.getpid())
                message += f" with {describe(record, eta=False)}, kept" if record else ""
            except Exception:  # noqa: BLE001 - the error itself must be recorded
                pass
            message += "; the next sync resumes"
            owner = read_owner(layout.lock)
            if owner is not None and owner.pid == os.getpid():
                owner_path(layout.lock).unlink(missing_ok=True)
            write_state(layout, last_error=message, last_error_at=time.time(), last_status="timeout")
            print(f"vaultsync sync: error: {message}", file=sys.stderr, flush=True)
        finally:
            os._exit(0)  # a hook never fails git

    signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)


def _record_error(exc: BaseException, line: str | None = None) -> None:
    """``exc`` (or ``line``, already said) as the last error in the index state, what `vaultsync status`
    shows; on stderr too when no ``line`` is given."""
    from vaultsync.index.state import format_exception, write_state

    if line is None:
        line = format_exception(exc)
        print(f"vaultsync sync: error: {line}", file=sys.stderr)
    try:
        from vaultsync.git import open_repo
        from vaultsync.index.layout import layout_for

        repo = open_repo(Path.cwd())
        if repo is not None:
            write_state(layout_for(repo), last_error=line, last_error_at=time.time())
    except Exception:  # noqa: BLE001 - nothing more we can do without failing the hook
        pass
