"""A mobile carrier's line and the customer's phone, as plain functions on the state.

The agent's tools (check_line, reset_line) act on the line; the customer's own
tools (check_status_bar, toggle_airplane_mode) act on the phone, and only the
simulated user calls them (the case's `user.tools`). Both act on the same state.
"""


def check_line(state, args):
    line = state["lines"].get(args.get("phone", ""))
    if line is None:
        raise ValueError(f"no line {args.get('phone')!r}")
    online = not state["phone"]["airplane_mode"]
    return {"status": line["status"], "phone_seen_on_network": online}


def reset_line(state, args):
    line = state["lines"][args["phone"]]
    line["resets"] += 1
    return {"ok": True}


def check_status_bar(state, args):
    if state["phone"]["airplane_mode"]:
        return "Airplane mode ON | no signal"
    return "Signal 4 bars | 5G"


def toggle_airplane_mode(state, args):
    phone = state["phone"]
    phone["airplane_mode"] = not phone["airplane_mode"]
    return {"airplane_mode": phone["airplane_mode"]}
