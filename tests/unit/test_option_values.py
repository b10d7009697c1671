"""placement.option_values: values kept until oslo.config may have
changed one, read again after every way it can."""

import gc
import os

from oslo_config import cfg

from placement import option_values


def _conf(tmp_path, value=1):
    path = tmp_path / "gantt.conf"
    path.write_text(f"[g]\nvalue = {value}\n")
    conf = cfg.ConfigOpts()
    conf.register_opts([cfg.IntOpt("value", default=0, mutable=True),
                        cfg.IntOpt("other", default=7)], group="g")
    conf([], default_config_files=[str(path)])
    return conf, path


def _reader(reads):
    def read(conf):
        reads.append(1)
        return conf.g.value, conf.g.other
    return read


def test_read_once_then_kept(tmp_path):
    conf, _ = _conf(tmp_path)
    reads = []
    options = option_values.Options(conf, _reader(reads))
    assert [options.get() for _ in range(5)] == [(1, 7)] * 5
    assert len(reads) == 1


def test_every_change_oslo_config_knows_is_seen(tmp_path):
    conf, path = _conf(tmp_path)
    reads = []
    options = option_values.Options(conf, _reader(reads))
    assert options.get() == (1, 7)
    conf.set_override("value", 5, group="g")
    assert options.get() == (5, 7)
    conf.set_default("other", 8, group="g")
    assert options.get() == (5, 8)
    conf.clear_override("value", group="g")
    assert options.get() == (1, 8)
    # A SIGHUP: the file changed, the mutable option mutated.
    path.write_text("[g]\nvalue = 3\n")
    os.utime(path)
    conf.mutate_config_files()
    assert options.get() == (3, 8)
    conf.register_opts([cfg.IntOpt("third")], group="g")
    assert options.get() == (3, 8)
    assert len(reads) == 6  # once after each change, not between


def test_two_readers_of_one_conf_are_each_told(tmp_path):
    # One reader reading again must not make the other's values look
    # current.
    conf, _ = _conf(tmp_path)
    first = option_values.Options(conf, lambda c: c.g.value)
    second = option_values.Options(conf, lambda c: c.g.value * 10)
    assert (first.get(), second.get()) == (1, 10)
    conf.set_override("value", 2, group="g")
    assert first.get() == 2
    assert second.get() == 20


def test_read_keeps_one_per_conf_and_reader(tmp_path):
    conf, _ = _conf(tmp_path)
    other, _ = _conf(tmp_path / "..", value=4)
    reads = []
    reader = _reader(reads)
    assert option_values.read(conf, reader) == (1, 7)
    assert option_values.read(conf, reader) == (1, 7)
    assert option_values.read(other, reader) == (4, 7)
    assert len(reads) == 2
    conf.set_override("value", 9, group="g")
    assert option_values.read(conf, reader) == (9, 7)
    assert option_values.read(other, reader) == (4, 7)
    assert len(reads) == 3


def test_a_conf_gone_takes_its_values_with_it(tmp_path):
    conf, _ = _conf(tmp_path)
    option_values.read(conf, lambda c: c.g.value)
    key = id(conf)
    assert key in option_values._by_conf
    del conf
    gc.collect()  # a ConfigOpts and its groups make a cycle
    assert key not in option_values._by_conf


def test_a_failed_read_is_tried_again(tmp_path):
    conf, _ = _conf(tmp_path)
    options = option_values.Options(conf, lambda c: c.g.missing)
    for _ in range(2):
        try:
            options.get()
        except cfg.NoSuchOptError:
            pass
        else:
            raise AssertionError("an unknown option was read")
    conf.register_opts([cfg.IntOpt("missing", default=2)], group="g")
    assert options.get() == 2


def test_a_conf_without_oslo_cache_is_read_every_time():
    class Plain:
        value = 1
    plain = Plain()
    options = option_values.Options(plain, lambda c: c.value)
    assert options.get() == 1
    plain.value = 2
    assert options.get() == 2
