"""One repair plan from every repair a run's results ask for, checked offline before it is printed."""
