"""Problems and parameters: the band Problem of SPEC §2 and any family's parameters as a dict."""
import json
from dataclasses import dataclass, field
from typing import List, Union

from . import _capi


@dataclass
class Problem:
    """One band problem (SPEC §2; bandjit::Problem). Query i attends to keys
    i + D·(j − window_left) for j = 0 … window_left + window_right. Tensors: Q, K, V, O
    [B, N, H, Dh] ("bnhd") or [B, H, N, Dh] ("bhnd"); band tensors S, P with C = w_l + w_r + 1
    in place of Dh."""

    batch: int
    heads: int
    seq_len: int
    head_dim: int
    window_left: int
    window_right: int
    dtype: str = "float32"
    dilation: Union[int, List[int]] = 1
    layout: str = "bnhd"
    scale: float = 1.0
    key_mask: str = "none"
    runtime_batch: bool = False

    def to_dict(self):
        d = dict(self.__dict__)
        if not self.runtime_batch:
            del d["runtime_batch"]
        return d

    def to_json(self):
        return json.dumps(self.to_dict(), sort_keys=True)

    @property
    def diagonals(self):
        return self.window_left + self.window_right + 1


def parameters_json(parameters):
    """JSON text of a Problem, a dict of parameters, or JSON text as it is."""
    if isinstance(parameters, Problem):
        return parameters.to_json()
    if isinstance(parameters, str):
        return parameters
    return json.dumps(parameters, sort_keys=True)


def validate(family_or_problem, parameters=None):
    """Checks parameters without building anything: validate(problem) for a band Problem,
    validate("layer_norm", {...}) for any family. Raises BandjitError(kind="invalid_problem")
    naming the field, its value and the allowed range."""
    if parameters is None:
        if isinstance(family_or_problem, str):
            raise TypeError("validate(problem) takes a Problem or dict; for a family by name: validate(family, parameters)")
        _capi.check(_capi.lib().bandjit_validate_problem(_capi.text(parameters_json(family_or_problem))))
    else:
        _capi.check(_capi.lib().bandjit_validate_parameters(_capi.text(family_or_problem),
                                                            _capi.text(parameters_json(parameters))))
