"""Tools of the bookings-desk environment: one function per suite tool.

Each gets the state (a private in-memory copy of state.json for one attempt)
and the call's arguments, may change the state, and returns what the agent
reads. An exception is returned to the agent as the tool's error.
"""

from __future__ import annotations

from typing import Any

State = dict[str, Any]


def _booking(state: State, booking_id: str) -> dict[str, Any]:
    booking = state["bookings"].get(booking_id)
    if booking is None:
        raise LookupError(f"no booking {booking_id}")
    return booking


def get_booking(state: State, args: dict[str, Any]) -> dict[str, Any]:
    return _booking(state, args["booking_id"])


def find_bookings(state: State, args: dict[str, Any]) -> list[dict[str, Any]]:
    email = str(args["email"]).strip().lower()
    return [
        {k: b[k] for k in ("booking_id", "room", "check_in", "nights", "status")}
        for b in state["bookings"].values()
        if b["email"] == email
    ]


def check_availability(state: State, args: dict[str, Any]) -> dict[str, Any]:
    room = state["rooms"].get(args["room"])
    if room is None:
        raise LookupError(f"no room type {args['room']}")
    nights = int(args.get("nights", 1))
    return {
        "room": args["room"],
        "available": room["free"] > 0,
        "price_eur": room["price_eur"] * nights,
    }


def create_booking(state: State, args: dict[str, Any]) -> dict[str, Any]:
    room = state["rooms"].get(args["room"])
    if room is None:
        raise LookupError(f"no room type {args['room']}")
    if room["free"] <= 0:
        raise ValueError(f"no {args['room']} room is free")
    booking_id = f"BK-{state['next_id']}"
    state["next_id"] += 1
    room["free"] -= 1
    state["bookings"][booking_id] = {
        "booking_id": booking_id,
        "guest": args["guest"],
        "email": str(args["email"]).strip().lower(),
        "room": args["room"],
        "check_in": args["check_in"],
        "nights": int(args["nights"]),
        "status": "confirmed",
    }
    return {"booking_id": booking_id, "status": "confirmed"}


def change_dates(state: State, args: dict[str, Any]) -> dict[str, Any]:
    booking = _booking(state, args["booking_id"])
    if booking["status"] != "confirmed":
        raise ValueError(f"booking {booking['booking_id']} is {booking['status']}")
    booking["check_in"] = args["check_in"]
    booking["nights"] = int(args["nights"])
    return {"booking_id": booking["booking_id"], "check_in": args["check_in"]}


def cancel_booking(state: State, args: dict[str, Any]) -> dict[str, Any]:
    booking = _booking(state, args["booking_id"])
    if booking["status"] != "confirmed":
        raise ValueError(f"booking {booking['booking_id']} is {booking['status']}")
    booking["status"] = "cancelled"
    state["rooms"][booking["room"]]["free"] += 1
    return {"booking_id": booking["booking_id"], "status": "cancelled"}


def transfer_to_human(state: State, args: dict[str, Any]) -> dict[str, Any]:
    state["transfers"].append(args["summary"])
    return {"transferred": True, "queue": "guest relations"}
