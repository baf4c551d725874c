-- Rate-limit buckets shared by every process (bot/store/postgres/rate_buckets.py): one row per
-- limited key ("user:telegram:42", "ip:203.0.113.7"). `at` is the server's clock (epoch
-- seconds), so processes on machines whose clocks disagree still refill one bucket alike.
CREATE TABLE rate_buckets (
    key TEXT PRIMARY KEY,
    tokens DOUBLE PRECISION NOT NULL,
    at DOUBLE PRECISION NOT NULL,
    ok BOOLEAN NOT NULL  -- whether the last request took a token
);
CREATE INDEX rate_buckets_at ON rate_buckets (at);
