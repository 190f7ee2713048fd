"""post: report documents sent to a team server (`--report-to`), as a careful client (posting/client.py): no
redirect followed, one deadline for all of it, credentials never printed, and what the server did not store kept in
the user's cache for `send_pending` (`tfdoctor report send`, or the next post to that server)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from tfdoctor.report.document import EXIT_NOT_POSTED, EXIT_OK


@dataclass(frozen=True)
class PostRequest:
    url: str
    documents: Sequence[Mapping[str, Any]]
    token_file: Optional[str] = None
    labels: Sequence[str] = ()
    hostname: bool = False
    timeout: float = 15.0
    names: Sequence[str] = ()  # what to call each document in a failure line (scan: its interpreter)


@dataclass(frozen=True)
class Posted:
    ok: bool  # every document reached the server
    lines: list[str] = field(default_factory=list)  # what to tell the user (stderr), each one line

    def exit_code(self, code: int, required: bool) -> int:
        """--report-required: a run that would exit 0 exits 4 when a report did not reach the server."""
        return EXIT_NOT_POSTED if required and not self.ok and code == EXIT_OK else code


def post(request: PostRequest) -> Posted:
    from tfdoctor.posting.client import report_to

    outcome = report_to(request.url, list(request.documents), request.token_file, list(request.labels),
                        request.hostname, request.timeout, names=list(request.names) or None)
    return Posted(outcome.not_posted == 0, list(outcome.lines))


def send_pending(url: Optional[str], token_file: Optional[str], timeout: float) -> Posted:
    """The reports kept for `url`'s server sent (without a URL: for the one server reports are kept for); CannotRun
    when the URL is bad or reports are kept for several servers and none is named (the token goes only where the
    user points it)."""
    from tfdoctor.operations.common import CannotRun
    from tfdoctor.posting.client import Ambiguous, PostRefused, send_pending as send

    try:
        outcome = send(url, token_file, timeout)
    except (Ambiguous, PostRefused) as exc:
        raise CannotRun(str(exc)) from None
    return Posted(outcome.not_posted == 0, list(outcome.lines))
