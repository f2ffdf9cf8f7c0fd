"""Tools of the example orders/customers environment.

Each function implements the suite tool of the same name. It gets the state
(an in-memory copy of state.json, private to one attempt) and the call's
arguments, may change the state, and returns what the model will read. An
exception is returned to the model as the tool's error.
"""

from __future__ import annotations

from typing import Any

State = dict[str, Any]


def _order(state: State, order_id: str) -> dict[str, Any]:
    order = state["orders"].get(order_id)
    if order is None:
        raise LookupError(f"no order {order_id}")
    return order


def lookup_order(state: State, args: dict[str, Any]) -> dict[str, Any]:
    return _order(state, args["order_id"])


def search_orders(state: State, args: dict[str, Any]) -> list[dict[str, Any]]:
    customer = str(args.get("customer", "")).lower()
    found = []
    for order in state["orders"].values():
        who = state["customers"].get(order["customer_id"], {})
        names = {order["customer_id"].lower(), who.get("name", "").lower(), who.get("email", "")}
        if customer and customer not in names:
            continue
        if args.get("status") and order["status"] != args["status"]:
            continue
        found.append({k: order[k] for k in ("order_id", "placed_at", "status", "total_cents")})
    found.sort(key=lambda o: o["placed_at"], reverse=True)
    return found[: int(args.get("limit", 10))]


def get_customer(state: State, args: dict[str, Any]) -> dict[str, Any]:
    customer = state["customers"].get(args["customer_id"])
    if customer is None:
        raise LookupError(f"no customer {args['customer_id']}")
    return customer


def cancel_order(state: State, args: dict[str, Any]) -> dict[str, Any]:
    order = _order(state, args["order_id"])
    if order["status"] not in ("pending_payment", "processing"):
        raise ValueError(f"order {order['order_id']} is {order['status']} and cannot be cancelled")
    order["status"] = "cancelled"
    order["cancel_reason"] = args["reason"]
    return {"order_id": order["order_id"], "status": "cancelled"}


def refund_order(state: State, args: dict[str, Any]) -> dict[str, Any]:
    order = _order(state, args["order_id"])
    amount = int(args["amount_cents"])
    if order["refunded_cents"] + amount > order["total_cents"]:
        raise ValueError("the refund would exceed the order total")
    order["refunded_cents"] += amount
    refund_id = f"RF-{len(state['refunds']) + 1:04d}"
    state["refunds"][refund_id] = {
        "refund_id": refund_id,
        "order_id": order["order_id"],
        "amount_cents": amount,
        "reason": args["reason"],
    }
    return {"refund_id": refund_id, "order_id": order["order_id"], "amount_cents": amount}
