"""select_destinations as stages over one per-request state.

- state: RequestState, what one call knows as the stages fill it in;
- candidates: the placement query, its candidates, the candidate hosts;
- ranking: per instance, the filters, the weighers and the order;
- placing: per instance, the pick and its claim (all-or-nothing);
- consumption: what a placed instance takes from the host state table;
- selecting: the chosen hosts and their alternates, as Selections;
- flow: the stages in order.
"""
