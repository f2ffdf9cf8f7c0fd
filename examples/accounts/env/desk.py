"""Tools of the accounts desk: each function implements the suite tool of its name.

A tool gets the attempt's private copy of the state and the call's arguments.
``ToolError`` sends its message to the model as it is, marked as an error.
"""

from __future__ import annotations

from typing import Any

from toolproof import ToolError

State = dict[str, Any]


def _user(state: State, user_id: str) -> dict[str, Any]:
    user = state["users"].get(user_id)
    if user is None:
        raise ToolError(f"Error: no user {user_id}")
    return user


def get_user(state: State, args: dict[str, Any]) -> dict[str, Any]:
    return _user(state, args["user_id"])


def reactivate_user(state: State, args: dict[str, Any]) -> dict[str, Any]:
    user = _user(state, args["user_id"])
    if user["status"] != "suspended":
        raise ToolError(f"Error: user {user['user_id']} is {user['status']}, not suspended")
    user["status"] = "active"
    return {"user_id": user["user_id"], "status": "active"}


def change_plan(state: State, args: dict[str, Any]) -> dict[str, Any]:
    user = _user(state, args["user_id"])
    if user["status"] != "active":
        raise ToolError(f"Error: user {user['user_id']} is {user['status']}; plans change only on active accounts")
    user["plan"] = args["plan"]
    return {"user_id": user["user_id"], "plan": args["plan"]}


def close_ticket(state: State, args: dict[str, Any]) -> dict[str, Any]:
    ticket = state["tickets"].get(args["ticket_id"])
    if ticket is None:
        raise ToolError(f"Error: no ticket {args['ticket_id']}")
    ticket["open"] = False
    return {"ticket_id": ticket["ticket_id"], "open": False}


def status_is(state: State, args: dict[str, Any]) -> bool:
    """An end-state assertion (not a tool): the user has this status."""
    return bool(state["users"][args["user_id"]]["status"] == args["status"])
