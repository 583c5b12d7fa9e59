"""What changes tell open pages and parked polls: the websocket feeds, the receivers behind them."""
