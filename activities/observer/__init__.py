"""The worker's one observer of every watched attempt (`loop.Observer`), what it holds per
attempt (`watched`), and its judgement of one look (`news`)."""
