"""The command palette's provider: Textual's own commands and one entry per action of the
action table, each saying its key as the user has it (a `[keymap]` shows in the palette too)."""

from __future__ import annotations

from textual.app import SystemCommand
from textual.command import DiscoveryHit, Hit, Hits, Provider


class ActionCommands(Provider):
    """Serves `App.get_system_commands`, where the app lists the action table's entries."""

    def _commands(self) -> list[SystemCommand]:
        return list(self.app.get_system_commands(self.screen))

    async def discover(self) -> Hits:
        for command in self._commands():
            if command.discover:
                yield DiscoveryHit(command.title, command.callback, help=command.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self._commands():
            # the title or the description: "zoom" finds Zoom, "key z" finds it too
            score = max(matcher.match(command.title), matcher.match(command.help) * 0.5)
            if score > 0:
                yield Hit(score, matcher.highlight(command.title), command.callback, help=command.help)
