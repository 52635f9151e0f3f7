"""Store section: the behavior engine's four production tables."""

from thatchlab.store._thatch import ThatchSection

_S = ThatchSection("behavior")
KEY, ENGINE, TABLES = _S.KEY, _S.ENGINE, _S.TABLES
create, write, present, read, check_equal = _S.create, _S.write, _S.present, _S.read, _S.check_equal
default_params, model, read_frames = _S.default_params, _S.model, _S.read_frames
