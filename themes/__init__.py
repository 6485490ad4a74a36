"""Textual themes for the Cannpilot TUI, registered by the app at mount.

Every state the UI shows also has a marker and a word (📌 pinned, ✗ vetoed, ✓ passed), so no
theme carries meaning by colour alone; the high-contrast theme keeps text at the extremes.
"""

from __future__ import annotations

from textual.theme import Theme

DARK = Theme(
    name="cannpilot-dark",
    primary="#5FA8FF",
    secondary="#9D8CFF",
    accent="#FFB454",
    foreground="#D8DEE9",
    background="#11151C",
    surface="#1A2029",
    panel="#232B36",
    success="#7FD18B",
    warning="#F2C14E",
    error="#FF6B6B",
    dark=True,
)

LIGHT = Theme(
    name="cannpilot-light",
    primary="#1F5FBF",
    secondary="#6B4FBB",
    accent="#B35C00",
    foreground="#1B1F24",
    background="#F7F8FA",
    surface="#FFFFFF",
    panel="#E6E9EF",
    success="#1E7B34",
    warning="#8A5A00",
    error="#B3261E",
    dark=False,
)

HIGH_CONTRAST = Theme(
    name="cannpilot-high-contrast",
    primary="#FFFF00",
    secondary="#00FFFF",
    accent="#FFFF00",
    foreground="#FFFFFF",
    background="#000000",
    surface="#000000",
    panel="#1A1A1A",
    success="#00FF00",
    warning="#FFFF00",
    error="#FF4040",
    boost="#FFFFFF",
    dark=True,
    variables={
        "border": "#FFFFFF",
        "border-blurred": "#BBBBBB",
        "block-cursor-background": "#FFFF00",
        "block-cursor-foreground": "#000000",
        "block-cursor-text-style": "bold",
        "footer-key-foreground": "#FFFF00",
        "input-selection-background": "#FFFF00 60%",
    },
)

# Ascend red (the Huawei Ascend brand accent) on a charcoal ground.
ASCEND = Theme(
    name="cannpilot-ascend",
    primary="#E60012",
    secondary="#FF7A45",
    accent="#FFC53D",
    foreground="#ECECEC",
    background="#16161A",
    surface="#1F1F24",
    panel="#2A2A31",
    success="#73D13D",
    warning="#FFC53D",
    error="#FF4D4F",
    dark=True,
)

THEMES: tuple[Theme, ...] = (DARK, LIGHT, HIGH_CONTRAST, ASCEND)
THEME_NAMES: tuple[str, ...] = tuple(t.name for t in THEMES)
DEFAULT_THEME = DARK.name
