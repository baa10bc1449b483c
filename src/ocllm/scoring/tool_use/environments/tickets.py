"""`tickets`: a support queue the model lists, opens, assigns, comments on and closes. State: `{"tickets": [...],
"people": [...]}`, each ticket `{"id", "title", "status", "priority", "assignee", "comments"}`; a new ticket takes
the next id after the largest."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, ClassVar

from ocllm.scoring.tool_use.environments.base import Environment, ToolError
from ocllm.scoring.tool_use.environments.schemas import function, integer, string

STATUSES = ("open", "closed")
PRIORITIES = ("low", "normal", "high")
MAX_TICKETS = 1000
MAX_TEXT = 10_000
_KEYS = {"id", "title", "status", "priority", "assignee", "comments"}


class Tickets(Environment):
    kind: ClassVar[str] = "tickets"
    SCHEMAS: ClassVar[tuple[dict[str, Any], ...]] = (
        function("list_tickets", "List tickets, optionally only those with a status or an assignee.",
                 {"status": string("open or closed", enum=STATUSES), "assignee": string("A person's name.")},
                 required=()),
        function("get_ticket", "Show one ticket with its comments.", {"ticket_id": integer("The ticket's id.")}),
        function("create_ticket", "Open a new ticket.",
                 {"title": string("What the ticket is about."),
                  "priority": string("low, normal or high (normal when not given)", enum=PRIORITIES)},
                 required=("title",)),
        function("assign_ticket", "Assign a ticket to a person of the team.",
                 {"ticket_id": integer("The ticket's id."), "person": string("A person's name.")}),
        function("set_priority", "Change a ticket's priority.",
                 {"ticket_id": integer("The ticket's id."),
                  "priority": string("low, normal or high", enum=PRIORITIES)}),
        function("add_comment", "Add a comment to a ticket.",
                 {"ticket_id": integer("The ticket's id."), "text": string("The comment.")}),
        function("close_ticket", "Close a ticket with a resolution, added as its last comment.",
                 {"ticket_id": integer("The ticket's id."), "resolution": string("How it was resolved.")}),
    )  # fmt: skip

    def __init__(self, state: Mapping[str, Any]) -> None:
        self.tickets: list[dict[str, Any]] = copy.deepcopy(list(state.get("tickets", [])))
        for ticket in self.tickets:
            ticket.setdefault("status", "open")
            ticket.setdefault("priority", "normal")
            ticket.setdefault("assignee", None)
            ticket.setdefault("comments", [])
        self.people: list[str] = list(state.get("people", []))

    @classmethod
    def state_problem(cls, state: object) -> str | None:
        if not isinstance(state, dict) or set(state) - {"tickets", "people"}:
            return 'a tickets state is {"tickets": [...], "people": [...]}'
        people, tickets = state.get("people", []), state.get("tickets", [])
        if not isinstance(people, list) or not all(isinstance(p, str) for p in people):
            return "people is a list of names"
        if not isinstance(tickets, list) or len(tickets) > MAX_TICKETS:
            return f"tickets is a list of at most {MAX_TICKETS} tickets"
        ids: set[int] = set()
        for ticket in tickets:
            if not isinstance(ticket, dict) or set(ticket) - _KEYS or not isinstance(ticket.get("title"), str):
                return f"a ticket is an object of {', '.join(sorted(_KEYS))} with a title"
            number = ticket.get("id")
            if not isinstance(number, int) or isinstance(number, bool) or number in ids:
                return "each ticket has an integer id of its own"
            ids.add(number)
            if ticket.get("status", "open") not in STATUSES or ticket.get("priority", "normal") not in PRIORITIES:
                return f"ticket {number}: status is one of {STATUSES}, priority one of {PRIORITIES}"
        return None

    def state(self) -> dict[str, Any]:
        return {"tickets": copy.deepcopy(self.tickets), "people": list(self.people)}

    def _ticket(self, ticket_id: int) -> dict[str, Any]:
        for ticket in self.tickets:
            if ticket["id"] == ticket_id:
                return ticket
        raise ToolError(f"no ticket {ticket_id}")

    def _open(self, ticket_id: int) -> dict[str, Any]:
        ticket = self._ticket(ticket_id)
        if ticket["status"] != "open":
            raise ToolError(f"ticket {ticket_id} is closed")
        return ticket

    def list_tickets(self, status: str | None = None, assignee: str | None = None) -> dict[str, Any]:
        shown = [
            {key: t[key] for key in ("id", "title", "status", "priority", "assignee")}
            for t in self.tickets
            if (status is None or t["status"] == status) and (assignee is None or t["assignee"] == assignee)
        ]
        return {"tickets": shown}

    def get_ticket(self, ticket_id: int) -> dict[str, Any]:
        return copy.deepcopy(self._ticket(ticket_id))

    def create_ticket(self, title: str, priority: str = "normal") -> dict[str, Any]:
        if len(self.tickets) >= MAX_TICKETS or len(title) > MAX_TEXT:
            raise ToolError("the queue is full, or the title too long")
        number = max((t["id"] for t in self.tickets), default=0) + 1
        self.tickets.append(
            {"id": number, "title": title, "status": "open", "priority": priority, "assignee": None, "comments": []}
        )
        return {"id": number}

    def assign_ticket(self, ticket_id: int, person: str) -> dict[str, Any]:
        ticket = self._open(ticket_id)
        if person not in self.people:
            raise ToolError(f"{person!r} is not on the team ({', '.join(self.people)})")
        ticket["assignee"] = person
        return {"id": ticket_id, "assignee": person}

    def set_priority(self, ticket_id: int, priority: str) -> dict[str, Any]:
        ticket = self._open(ticket_id)
        ticket["priority"] = priority
        return {"id": ticket_id, "priority": priority}

    def add_comment(self, ticket_id: int, text: str) -> dict[str, Any]:
        ticket = self._ticket(ticket_id)
        if len(text) > MAX_TEXT or len(ticket["comments"]) >= 100:
            raise ToolError("the comment is too long, or the ticket has too many comments")
        ticket["comments"].append(text)
        return {"id": ticket_id, "comments": len(ticket["comments"])}

    def close_ticket(self, ticket_id: int, resolution: str) -> dict[str, Any]:
        ticket = self._open(ticket_id)
        self.add_comment(ticket_id, resolution)
        ticket["status"] = "closed"
        return {"id": ticket_id, "status": "closed"}
