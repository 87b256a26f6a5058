from tcplens.diagnosis import wording as w


def test_sizes_in_binary_kilobytes() -> None:
    assert w.size(65535) == "64 KB"
    assert w.size(1448) == "1.4 KB"
    assert w.size(512) == "512 bytes"
    assert w.size(8 * 1024 * 1024) == "8.0 MB"


def test_durations() -> None:
    assert w.duration(0.0304) == "30 ms"
    assert w.duration(0.0012) == "1.2 ms"
    assert w.duration(2.5) == "2.5 s"
    assert w.duration(13.0) == "13 s"


def test_rates_in_bits_per_second() -> None:
    assert w.rate(1.25e6) == "10 Mbit/s"
    assert w.rate(30e3) == "240 kbit/s"
    assert w.rate(125e6) == "1.0 Gbit/s"
    assert w.rate(1.3e6) == "10 Mbit/s"


def test_articles_follow_how_numbers_are_read() -> None:
    assert w.a("30 ms") == "a 30 ms"
    assert w.a("80 ms") == "an 80 ms"
    assert w.a("11 ms") == "an 11 ms"
    assert w.a("110 ms") == "a 110 ms"
