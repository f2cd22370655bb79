"""The Python package's parts that need no GPU: problems and parameters are validated with
the library's messages, families are listed, kernels are pregenerated into a disk cache."""
import json
import os
import tempfile
import unittest

import bandjit


class PackageTest(unittest.TestCase):
    def test_version_matches_the_library(self):
        self.assertRegex(bandjit.version(), r"^\d+\.\d+\.\d+$")

    def test_a_valid_problem_passes(self):
        bandjit.validate(bandjit.Problem(1, 12, 4096, 64, 256, 256, "float16"))
        bandjit.validate("band_pv", {"batch": 2, "heads": 4, "seq_len": 100, "head_dim": 32, "window_left": 3,
                                     "window_right": 0, "dtype": "bfloat16", "dilation": [1, 2, 3, 4]})

    def test_bad_fields_are_named_with_their_range(self):
        with self.assertRaises(bandjit.BandjitError) as e:
            bandjit.validate(bandjit.Problem(1, 12, 4096, 60, 256, 256, "float16"))
        self.assertEqual(e.exception.kind, "invalid_problem")
        self.assertIn("head_dim = 60", str(e.exception))
        self.assertIn("multiple of 16", str(e.exception))
        with self.assertRaises(bandjit.BandjitError) as e:
            bandjit.validate("band_qk", {"batch": 1})
        self.assertIn("heads", str(e.exception))
        with self.assertRaises(bandjit.BandjitError) as e:
            bandjit.validate("band_qkv", {})
        self.assertIn("unknown kernel family", str(e.exception))
        with self.assertRaises(bandjit.BandjitError) as e:
            bandjit.validate("band_qk", "{not json")
        self.assertIn("not valid JSON", str(e.exception))

    def test_families_describe_their_parameters(self):
        fams = {f["name"]: f for f in bandjit.families()}
        self.assertIn("band_qk", fams)
        self.assertEqual(fams["band_qk"]["arguments"], ["q", "k", "s"])
        names = [p["name"] for p in fams["band_qk"]["parameters"]]
        self.assertIn("window_left", names)

    def test_pregenerate_compiles_once_then_finds_the_cache(self):
        with tempfile.TemporaryDirectory() as d:
            os.chmod(d, 0o700)
            p = bandjit.Problem(1, 2, 256, 32, 8, 8, "float16", dilation=2)
            self.assertTrue(bandjit.pregenerate("band_softmax", p, arch="sm_90", cache_dir=d))
            self.assertFalse(bandjit.pregenerate("band_softmax", p, arch="sm_90", cache_dir=d))
            self.assertEqual(bandjit.cache_summary(d)["entries"], 1)
            with self.assertRaises(bandjit.BandjitError) as e:
                bandjit.pregenerate("band_softmax", p, arch="sm_12", cache_dir=d)
            self.assertIn("sm_12", str(e.exception))

    def test_problem_json_is_the_shape_file_form(self):
        p = bandjit.Problem(1, 2, 64, 16, 3, 0, "float32", runtime_batch=True)
        doc = json.loads(p.to_json())
        self.assertEqual(doc["runtime_batch"], True)
        self.assertEqual(p.diagonals, 4)


if __name__ == "__main__":
    unittest.main()
