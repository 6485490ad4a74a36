"""The TUI's side of the one settings model, `copilot.config.Settings` (settings.yaml +
`CANNPILOT_*` + flags): what only the front end can check (theme names, key-binding ids) and a new
session's request from the settings. The TUI's own preferences are the `tui` section
(`auto_continue`, `keymap`) and the shared `theme`; the app saves them with `Settings.save`
(atomic).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from copilot.config import Settings
    from tui.engine_host import SessionRequest


def check_theme(settings: Settings) -> None:
    """`BadInput` naming where an unknown theme was set (themes are a front-end notion)."""
    from copilot.errors import BadInput
    from themes import THEME_NAMES

    if settings.theme not in THEME_NAMES:
        raise BadInput(f"{settings.source_of('theme')}: `theme`: unknown theme '{settings.theme}' "
                       f"(known: {', '.join(THEME_NAMES)})")


def unknown_keymap_ids(settings: Settings, known: set[str]) -> list[str]:
    """Binding ids of `tui.keymap` that no binding of the app has (Textual would ignore them)."""
    return sorted(set(settings.tui.keymap) - known)


def session_request(settings: Settings, **fields) -> SessionRequest:
    """A new session's request: chip, backend, agent, rounds and variants from the settings."""
    from tui.engine_host import SessionRequest

    defaults = dict(chip=settings.chip, backend=settings.backend, agent=settings.model or "offline",
                    rounds=settings.rounds, variants=settings.variants)
    return SessionRequest(**{**defaults, **fields})
