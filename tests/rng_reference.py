"""Plain Python reference of the counter-based hash of ``plume_multi/engine/rng.py`` (shared by
the tests of the engine's draws and of the models that draw)."""

M64 = (1 << 64) - 1


def _fmix64(z):
    z ^= z >> 33
    z = (z * 0xFF51AFD7ED558CCD) & M64
    z ^= z >> 33
    z = (z * 0xC4CEB9FE1A85EC53) & M64
    return z ^ (z >> 33)


def ref_key(seed, episode, stream):
    z = _fmix64((seed + 0x9E3779B97F4A7C15) & M64)
    z = _fmix64(z ^ ((episode * 0xD1B54A32D192ED03) & M64))
    return _fmix64(z ^ ((stream * 0xA0761D6478BD642F + 0x632BE59BD9B4E019) & M64))


def ref_u64(key, a, b):
    z = _fmix64(key ^ ((a * 0x8CB92BA72F3D8DD7 + 1) & M64))
    return _fmix64(z ^ ((b * 0xE7037ED1A0B428DB + 0x1D8E4E27C47D124F) & M64))
