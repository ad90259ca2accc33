"""Output bytes are pinned: a small ``generate`` (every sensor kind, every product, CPU) and one
``oceansim-py render KIND`` per target must write exactly the files they wrote when this test was recorded.

The hashes were recorded from the code before the sensor registry (issue 15) replaced the per-sensor commands
and dataset adapters; a refactor that changes a single byte of any output fails here. The manifest is compared
without what depends on the machine or the moment (``timing``, ``versions``, ``render_seconds``, paths).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from oceansim_py.cli import main

#: every sensor kind with every product it has, tiny sizes; 2 frames in one shard
RIG = {
    "name": "golden", "scene": "tank", "seed": 11, "frames": 2, "tick_rate_hz": 2.0, "shard_size": 2,
    "batch_size": 2,
    "trajectory": {"type": "transect", "start": [-1.0, 0.0, -1.5], "end": [1.5, 0.0, -1.5], "speed": 0.5},
    "sensors": [
        {"name": "cam", "type": "camera", "preset": "clear_ocean_sunlit", "rate_hz": 2.0,
         "config": {"width": 16, "height": 12},
         "products": ["rgb_png", "depth_png", "label_png", "depth", "range", "label", "linear", "in_air", "normal"],
         "mount": [0.3, 0, 0.1, 0, 10, 0]},
        {"name": "fls", "type": "imaging_sonar", "preset": "oceansim_default", "rate_hz": 2.0,
         "config": {"max_range": 6.0, "n_beams": 16, "range_bins": 24, "rays_per_beam": 2, "elevation_rays": 8},
         "products": ["intensity", "clean_intensity", "hit_count", "label_id", "polar_png", "fan_png"]},
        {"name": "mbes", "type": "multibeam", "preset": "blueview_p900_peer", "rate_hz": 2.0,
         "config": {"n_beams": 16, "max_range": 4.0, "rays_per_beam": 3},
         "products": ["time_series", "intensity", "db", "polar_png", "fan_png"], "mount": [0.5, 0, 0, 0, 40, 0]},
        {"name": "sss", "type": "sidescan", "preset": "sidescan_900khz", "rate_hz": 2.0,
         "config": {"max_range": 5.0, "range_bins": 40, "across_track_rays": 64},
         "products": ["intensity", "clean_intensity", "ground_intensity", "hit_count", "label_id", "altitude"]},
        {"name": "swath", "type": "profiling", "preset": "holoocean_default", "rate_hz": 2.0,
         "config": {"n_beams": 8, "max_range": 5.0, "range_bins": 50, "image": True},
         "products": ["bottom_range", "intensity", "valid", "label_id", "point_sensor", "point_world", "image",
                      "clean_image", "image_png"]},
        {"name": "alt", "type": "singlebeam", "preset": "altimeter_200khz", "rate_hz": 2.0,
         "mount": [0, 0, 0, 0, 90, 0], "config": {"cone_rings": 2, "rays_per_ring": 8}},
        {"name": "dvl", "type": "dvl", "preset": "dvl_30deg", "rate_hz": 4.0,
         "products": ["velocity", "valid", "altitude", "beam_range", "beam_velocity", "beam_valid"]},
        {"name": "imu", "type": "imu", "preset": "consumer_mems", "rate_hz": 4.0,
         "products": ["accel", "gyro", "accel_bias", "gyro_bias", "true_accel", "true_gyro"]},
        {"name": "baro", "type": "barometer", "preset": "bar30", "rate_hz": 2.0},
        {"name": "gps", "type": "gps", "preset": "standalone", "rate_hz": 2.0, "mount": [0, 0, 2.0, 0, 0, 0],
         "products": ["position", "fix", "depth", "threshold"]},
        {"name": "pose", "type": "pose", "rate_hz": 2.0, "products": ["matrix", "true_matrix"]},
    ],
}

#: file (relative to the dataset folder) -> SHA-256 of its bytes, recorded from the code before issue 15. One
#: deliberate change since: the single-beam table column ``altitude`` is now ``first_return_range`` (issue 13
#: item 4), which changed ``alt/samples.csv`` in its header line only (the values are the same bytes), and with it
#: the file hashes in ``shard.json`` and the manifest (the product's name and unit). A second: float64 table cells
#: are written exactly (repr where 9 significant digits do not read back as the same float64; dataset/shards.py
#: float_cell), which changed the noisy float64 columns of ``baro``, ``gps`` and ``imu`` ``samples.csv`` (the
#: same values, now to the last bit), and with them ``shard.json`` and the manifest's checksum. A third: the IMU
#: presets keep their noise density at the rig's rate (its ``rate_hz`` becomes the config ``rate``; docs/PHYSICS.md
#: §6), so the consumer_mems IMU here at 4 Hz has white noise exactly sqrt(4 / 100) = 0.2 of its former 100 Hz
#: per-sample values in the ``accel`` and ``gyro`` columns of ``imu/samples.csv`` (biases and truths the same
#: bytes), which changed that file and ``shard.json``. A fourth (audit CR): the water presets' veiling
#: light is b_b / (2 (a + b_b)), not b_b / (2c) (docs/PHYSICS.md §4), which changed the camera's ``linear`` and
#: ``rgb_png`` (``in_air``, depth, range, labels, normals the same bytes) and ``shard.json``.
GENERATE_HASHES: dict[str, str] = {
    "shard_00000/alt/intensity_000000.npy": "e75c59f0a7d8798b1ab1d82b53e16c76ca8dc7fbe097c74eb0c9718c021502ac",
    "shard_00000/alt/intensity_000001.npy": "7849980e007f6323e8119f035eacd4b32d7ae4a9cd20c73864fce0c35ea9cd84",
    "shard_00000/alt/samples.csv": "f30a134b0962747bda145a919d9a63e61551c6dae8688a4031bad6a6fa29f8ea",
    "shard_00000/baro/samples.csv": "b75fe1c79e8e0e651b7169ee912074a1176a22ad5fe63df6e5d588abab200782",
    "shard_00000/cam/depth_000000.npy": "565cf873beb07116843f985c8b7847eca6b36a4de7a8926f7c1a40d62e2c6091",
    "shard_00000/cam/depth_000001.npy": "0e8bdec35348be2e07b965aa1bd9a2796c9ce0aac798cc65ec785dcff343b5f1",
    "shard_00000/cam/depth_png_000000.png": "5e0391c45a12923656adecac02dff61ba0f5f230da164e1161f1dc2a56af11e9",
    "shard_00000/cam/depth_png_000001.png": "186af91b9c8e6e622241fc132885b9a4d2ac6133ef1f974bb211a0d5e9135a3d",
    "shard_00000/cam/in_air_000000.npy": "512b89780623c140c4ea0f8ae2b9fda8aeae480a21b61022b2088aaeff3c64e1",
    "shard_00000/cam/in_air_000001.npy": "512b89780623c140c4ea0f8ae2b9fda8aeae480a21b61022b2088aaeff3c64e1",
    "shard_00000/cam/label_000000.npy": "2044dea2ceb4edb7ca203b52cf2c4e6074491bd357ca6d99748adcfd42d3f813",
    "shard_00000/cam/label_000001.npy": "2044dea2ceb4edb7ca203b52cf2c4e6074491bd357ca6d99748adcfd42d3f813",
    "shard_00000/cam/label_png_000000.png": "277942cd419ee0cfe38748523a8de1a03a538a46f112f50f20b4d7a08e57ba8b",
    "shard_00000/cam/label_png_000001.png": "277942cd419ee0cfe38748523a8de1a03a538a46f112f50f20b4d7a08e57ba8b",
    "shard_00000/cam/linear_000000.npy": "bbbf589087fb02e73705a041034b9bd08e06ecd9a4bd21f3ad4b1c434c9c56fe",
    "shard_00000/cam/linear_000001.npy": "6b15651c178ffbfe6397603df51bc63f29e0f093761414104bca7ace63329359",
    "shard_00000/cam/normal_000000.npy": "bd8725e8ee27becebfc226618ebb8e2a029f122efe7f165ce7664b0acd993d22",
    "shard_00000/cam/normal_000001.npy": "1f92752329d6de4ed34039cacfe9717ae69ebdededb99ae91d69a99b16e69e92",
    "shard_00000/cam/range_000000.npy": "dc520eafb08ff3edfa37d25ef8c7c0cfcdc8fe8bdcbaea9022de667828f78807",
    "shard_00000/cam/range_000001.npy": "dc8445987541165bf85f066e4cbab0010bf890cda815e338c4af15eb8158b606",
    "shard_00000/cam/rgb_png_000000.png": "f09ccff8b61f29ec67df5112082df46242f5462d0b9a81e95592d3ce6d12407b",
    "shard_00000/cam/rgb_png_000001.png": "04b0b7e14de2a6f403a11836f40da2b2919b64c0c65159b03c80757b3bae5c60",
    "shard_00000/dvl/samples.csv": "888a48c301179768b292905ea11d7c98e5a383f20ce94c3524e628fa6c919c92",
    "shard_00000/fls/clean_intensity_000000.npy": "25e15df35b2d6a9accb13aebbed5e420b26015cf73c07728019215e3d8982718",
    "shard_00000/fls/clean_intensity_000001.npy": "900e26cdf8f4fba7b356144d53923748990e34cbafad96b1d4340bf149e16ebb",
    "shard_00000/fls/fan_png_000000.png": "cf675ddde23c076e70f52a9292994ebd65d7bc5d358a1c3769255d57331b144a",
    "shard_00000/fls/fan_png_000001.png": "112b37e655f8cb03a73c34f53ec747bca6e2600bb41d1ce1db3ec810180597a9",
    "shard_00000/fls/hit_count_000000.npy": "ff6b990bc77d7d9ae8a0df022d6f38a842cdf991b0b0e36a4aea075a10138b02",
    "shard_00000/fls/hit_count_000001.npy": "ad490fe01debe48ca5c2d88ed2f86d79ee60ba628b89f8cc446d8f2a35e13950",
    "shard_00000/fls/intensity_000000.npy": "996110142c72e32076efcb4547d244e20e3658fed8472d3393361de2170c1ccd",
    "shard_00000/fls/intensity_000001.npy": "46c80367903205bea9e1244325f922a45531fa7d5e282c552168711a2bb229ee",
    "shard_00000/fls/label_id_000000.npy": "2818293a9bb2f9a1ed37759ab61a60a185e413c939c65e589cbc855d9bdd5e74",
    "shard_00000/fls/label_id_000001.npy": "ce9687430b1877592d44dde04718add4010459c863bf3ef28e9e56fa980f8114",
    "shard_00000/fls/polar_png_000000.png": "25911ec58396806952084b7c0d101d6aa4296f904db47af56aea0499ea4d08f2",
    "shard_00000/fls/polar_png_000001.png": "e756ad015ea46db368da841885654f07aa026388b359f25c8b4522c7b70f5dd7",
    "shard_00000/gps/samples.csv": "1c7313884e28f7e941081b3d1d11159d377632fd601968ccec321067fe07e7cd",
    "shard_00000/imu/samples.csv": "802fa15726b50b5cfd39d8aaa6a098f9ed2ddbc69d7658b4ccfa9c25527133d2",
    "shard_00000/mbes/db_000000.npy": "f5156233fbda5d737143fe8389fe187d630dadf5a8791f644a7d43290017cbcc",
    "shard_00000/mbes/db_000001.npy": "3bd148366901578f4b8c90e47d1fb3e8ad71c3e39306d584d3c941fd914c44c4",
    "shard_00000/mbes/fan_png_000000.png": "c590483ba22e0a45c9dbea7f7957693c27ae69fa8d81429bfb73755bf37856b9",
    "shard_00000/mbes/fan_png_000001.png": "7347da3d86917b6c6ef7f3d6b23523ef737712e24c977c013b736fc8447d7c81",
    "shard_00000/mbes/intensity_000000.npy": "f9e19f3a46394cf3ccff877cc7324057e72e56c41a2c3053827569ddc197d334",
    "shard_00000/mbes/intensity_000001.npy": "29df6c212ad85ab0628e7da938c3bb8b2add8006b750e42af1fb52f6b85ebf16",
    "shard_00000/mbes/polar_png_000000.png": "1bbf7e13f5587f17c0608c79cc9c45167a22b847f79ce2c8af64affc84a84919",
    "shard_00000/mbes/polar_png_000001.png": "62c93fff23a2951c978e9879e38aabc1d866115aab8cf4bae9b49e2160b770ef",
    "shard_00000/mbes/time_series_000000.npy": "da12728e9024c38510f39c38c8811d12315d766c779feedefa004cf9018bf9d0",
    "shard_00000/mbes/time_series_000001.npy": "c029c5f1d9338d913d5cc79250ae4f699e752647e72419899b76d8f16ff3ced4",
    "shard_00000/pose/samples.csv": "20ade579e94696e4fbca555e606ae99041cee99b40704783b9553ef3adab6f3b",
    "shard_00000/shard.json": "0a467fed2c41b82994a3b7f3eb022666d93d322d31284f5b200bcede474940b9",
    "shard_00000/sss/clean_intensity_000000.npy": "7ff11f10067a317798a750cf0bc6143453f1c9b11d48d42559e2e5eac7f3ffa1",
    "shard_00000/sss/clean_intensity_000001.npy": "63e6e9f6585bf7075bf30bc3140d377cb06f58be65263fae0e45fc4d994d82ad",
    "shard_00000/sss/ground_intensity_000000.npy": "ec46e0020e0c798596cba4f830562ba5b4664e8a095bccf2e476f44950582ded",
    "shard_00000/sss/ground_intensity_000001.npy": "4d0dbddee491e70d62728213d6e193679611d46a4954f04ad80a0215fe12d8af",
    "shard_00000/sss/hit_count_000000.npy": "3080eaa588e88e6aaf8983df02c12982d3e6ebc61aa0b4e23ea4ed0bc9d96311",
    "shard_00000/sss/hit_count_000001.npy": "3080eaa588e88e6aaf8983df02c12982d3e6ebc61aa0b4e23ea4ed0bc9d96311",
    "shard_00000/sss/intensity_000000.npy": "95f4e13b89292ba0001608b14261d0926ddb2043ba2b975ac5e3ae904355dfc2",
    "shard_00000/sss/intensity_000001.npy": "69955eaab56bfcfa06fc5686bc356e70bc8117c8043b27ef17bc0ccf2659244e",
    "shard_00000/sss/label_id_000000.npy": "73789fa5fc275ca93c267100a5100b630397b033be464c13a31d43ea25699821",
    "shard_00000/sss/label_id_000001.npy": "73789fa5fc275ca93c267100a5100b630397b033be464c13a31d43ea25699821",
    "shard_00000/sss/samples.csv": "d1c3a6308bccdcdfb714080d64b8b2078f380a4511b37ab9cb66314b80fc91eb",
    "shard_00000/swath/bottom_range_000000.npy": "f1cc003697a9e0e3ca25090b6db5af94e10938b83899bd965453d707028f6450",
    "shard_00000/swath/bottom_range_000001.npy": "f1cc003697a9e0e3ca25090b6db5af94e10938b83899bd965453d707028f6450",
    "shard_00000/swath/clean_image_000000.npy": "83961ff2ab1db40e4059421ab6f5c0d20895e4c55dd21d8cb19c1d06b08c1cc0",
    "shard_00000/swath/clean_image_000001.npy": "83961ff2ab1db40e4059421ab6f5c0d20895e4c55dd21d8cb19c1d06b08c1cc0",
    "shard_00000/swath/image_000000.npy": "83961ff2ab1db40e4059421ab6f5c0d20895e4c55dd21d8cb19c1d06b08c1cc0",
    "shard_00000/swath/image_000001.npy": "83961ff2ab1db40e4059421ab6f5c0d20895e4c55dd21d8cb19c1d06b08c1cc0",
    "shard_00000/swath/image_png_000000.png": "fabab7e41eefed07d26abf68f190f96753405a1452fe69e621ce8a3789163d79",
    "shard_00000/swath/image_png_000001.png": "fabab7e41eefed07d26abf68f190f96753405a1452fe69e621ce8a3789163d79",
    "shard_00000/swath/intensity_000000.npy": "0604912cfe11381ec71d388c943934371f56ba31333d5c4d44e092b58e48abdc",
    "shard_00000/swath/intensity_000001.npy": "0604912cfe11381ec71d388c943934371f56ba31333d5c4d44e092b58e48abdc",
    "shard_00000/swath/label_id_000000.npy": "426fe4f68e8ca1559d762d5b0da5dbb07925db04811a5e62988ecfd4dc26684a",
    "shard_00000/swath/label_id_000001.npy": "426fe4f68e8ca1559d762d5b0da5dbb07925db04811a5e62988ecfd4dc26684a",
    "shard_00000/swath/point_sensor_000000.npy": "602530a10d3aac8823917076ada312108169a210b81af5fde53398feeb8855e8",
    "shard_00000/swath/point_sensor_000001.npy": "602530a10d3aac8823917076ada312108169a210b81af5fde53398feeb8855e8",
    "shard_00000/swath/point_world_000000.npy": "58b03b26e64e1de4124d952aa319d16826052063a84766f40285bc77801f6d01",
    "shard_00000/swath/point_world_000001.npy": "7f7cbabdfd659ad3308bf7f59b502c6087d86c9564f0e9037054996e933d0001",
    "shard_00000/swath/valid_000000.npy": "aef9bc1214bee3adf451022cf4f51f2779e4d3d1769116de221bb28c4c84001e",
    "shard_00000/swath/valid_000001.npy": "aef9bc1214bee3adf451022cf4f51f2779e4d3d1769116de221bb28c4c84001e",
}

#: SHA-256 of the manifest's canonical JSON without the machine- and moment-dependent fields. One deliberate change
#: since it was recorded: the DVL config gained the current / water-track fields (issue 17 item 5: water_track,
#: current, current_velocity, current_profile, current_file, blanking_distance, water_layer, water_velocity_sigma),
#: which the manifest records with their defaults; with those eight keys removed it hashes to the recorded
#: b99b2a45542a4ca629e220124db33b3500f21c9bad4101a68d78040f62bbad94, and no data file changed. Then (issue 11):
#: the device-named multibeam preset became the device model, so the run names its peer `blueview_p900_peer`
#: (same values, same bytes), and the acoustic products' unit texts state the device model's units. Then (issue 16):
#: every acoustic config gained multipath_bounces, surface_reverberation and surface_wind_speed, which the manifest
#: records with their defaults (0, false, null) for the five acoustic sensors; without those keys it hashes to the
#: previous 3a2bd5d2caeac8eee313acf483807f858635596ef71d80135a726f8f6af740db, and no data file changed. The DVL config
#: gained `tracking` (issue 16, surface tracking; default bottom): without it the manifest hashes to the recorded
#: 9d3039f7929dde95da9321a9263e5a0590f498957bc2eaf127be63e4b447deb3. Every acoustic config gained
#: multipath_mixed_paths (issue 16, mixed-path returns; default true): without that key (five sensors) the manifest
#: hashes to the previous 1adb28b3a7b3b9e25220e0467da73f4d99cd8277d79671f070c8c0db144fda67, and no data file changed.
#: The profiling sonar's schema states its device-model units (beam `intensity`: the sum of the rays' echoes before
#: TVG; `image`: the chain's intensity unit): with the former texts the manifest hashes to the previous
#: b37bd719d2a813815234132cc784ef6cf24952500effb46abde73bd401eeaf1a, and no data file changed. Every acoustic config
#: gained beam_steering and element_width (issue 11, steered flat arrays; defaults flat_array, 0.5): without those
#: keys (five sensors) the manifest hashes to the previous
#: a9497136322dce7bb6cf5879364ad6ba98ce17beb2b51b0eed216c03ea451754, and no data file changed. The exact float64
#: table cells (GENERATE_HASHES' second change) changed the shard checksum: d632be3c28fc8b48033cdf7878f093fe90ddc120
#: 58fcf2677f40c43fa6a76faa. The multibeam's schema states its device-model units (`time_series`: the received
#: pressure before gain; `db`: after the TVG and gain): with the former texts the manifest hashes to that previous
#: value, and no data file changed. Every acoustic config gained post_tvg_noise_level (issue 11, the receiver's
#: noise after the TVG; default null): without that key the manifest hashes to the previous
#: 02af8111c7e1dce01a01e408a2d6e4be09d51233c59fc98125b52c7ba114afa6, and no data file changed. The side-scan,
#: profiling and single-beam configs gained display_floor (the device presets' 8-bit window; default null): without
#: those three keys the manifest hashes to the previous
#: caba4369d62042565820a604e4e2650529a774d364b97477229353c9a9d79c38, and no data file changed. The IMU's rig rate
#: (GENERATE_HASHES' third change): its config records rate 4 and sigmas x 0.2, the rig's sensor config records
#: rate 4, and the shard checksum and fingerprint follow; before it, a0ff137fb842b9369e9e269676807e6e01deadf76ac8c9dc
#: b7ceb99cd9ee9de3. The camera's veiling light (GENERATE_HASHES' fourth change) changed the shard checksum; before
#: it, 8b00acf8f58365717eaa04b6768cf66e60e16ff217fe85fe022009373980f80e.
MANIFEST_HASH = "29415cfb1644cad938762f0ace8e1e063ed4f07e37f11e1663374efa363ad1f5"

#: ``oceansim-py render TARGET`` arguments (tank scene, fixed pose, tiny sizes) -> file -> SHA-256
RENDERS: dict[str, list[str]] = {
    "sonar": ["--pose", "0,0,-1.5,0,10,0", "--set", "n_beams=16", "--set", "range_bins=32", "--set",
              "elevation_rays=8", "--fan-width", "64"],
    "multibeam": ["--preset", "blueview_p900_peer", "--pose", "0,0,-1.5,0,30,0", "--set", "n_beams=16", "--set", "max_range=5", "--fan-width", "64"],
    "camera": ["--pose", "0,0,-1.5,0,10,0", "--set", "width=16", "--set", "height=12"],
    "sidescan": ["--pose", "-1,0,-1.5,0,0,0", "--pings", "3", "--set", "range_bins=40", "--set", "max_range=5",
                 "--set", "across_track_rays=64"],
    "profiling": ["--pose", "-1,0,-1.5,0,0,0", "--pings", "2", "--set", "n_beams=8", "--set", "max_range=5"],
    "singlebeam": ["--pose", "-1,0,-1.5,0,90,0", "--pings", "3", "--set", "cone_rings=2",
                   "--set", "rays_per_ring=8"],
}
#: camera_linear.npy, camera_rgb.npy and camera_rgb.png re-recorded for the veiling light (audit CR, as above)
RENDER_HASHES: dict[str, dict[str, str]] = {
    "camera": {
        "camera_depth.npy": "06f3c490941fab240b7d50cb9c6146383c30cc3ab6a9da1244ca94e8ed156b17",
        "camera_depth.png": "2c298a55da231328c76c97324cc8d930813abb2d59d42909a86569eabc9b5358",
        "camera_in_air.npy": "fbde0f31738525d150d460c85c85d067543a1fb56e96c6d3e3bbf9d82b7a5d5c",
        "camera_label.npy": "db629da029522e16face7dde94f56ad29e9aa1c0db6c7a82a0e226dbbf271849",
        "camera_label.png": "aef04f43941103207f48f9978b6c7114ae8a245962625ad84b04d62609948da0",
        "camera_labels.json": "59d7ef468203c4902d00c67f59b201cb2ef4c0d51a6b1f4f6e5860c3df6cb93b",
        "camera_linear.npy": "e6411c0c259e7f387c5393152dd4c1bcd10e0b72133b3f858ddc41513f8e68db",
        "camera_normal.npy": "6c18e04ed0a0fe47b3c37c8248891a690ee1afedebc3c547117f2d285ff50c71",
        "camera_range.npy": "827865a4360a61cf0be15f818006c80a5d22c5b1cddcac1bee95431c5ce209e2",
        "camera_rgb.npy": "6d0e888874fabc81edc522a0d1c3ef30580a234936ce388f2eb0d5fd7b61542e",
        "camera_rgb.png": "a1b758bbfad054395818d70d917360c7479789b9d25799a29cf5d64d81c58821",
    },
    "multibeam": {
        "multibeam_bearings.npy": "4ceaafae0c3a7d5e1e026e15a78f845489116dba092f5f58aabc5c317ab59ca2",
        "multibeam_fan.png": "554704666f5bb39e4c8a541e211b677a7d68031b4783cc3d763840a3fb0990d9",
        "multibeam_intensity.npy": "2cfa7d053d760b6fa542356e6eb2d24527c31219b05a4b49fb668f0163dc7237",
        "multibeam_polar.png": "df8d2ba1656b05a7e60b9168023a45c211bb9704ce9318419777bfcb00d012d8",
        "multibeam_ranges.npy": "4558a0f72792793c90b9fb1bfcb3bdecce5ba424ba2b367e36a858d68082597c",
        "multibeam_time_series.npy": "a45a67e74c89d151531be4687af371dcb4cdac9eedbb79b4780bb4303a1847e7",
    },
    "profiling": {
        "profiling.ply": "8d2f0a1be9805ce57864c4adf8b2e428b6b6f3f037fcbb3681c91733168fa095",
        "profiling_beam_angles.npy": "a4a64223c0b5ca0f44bd35e59119b935cf7d13c8363c71de5650c6ce293e8e16",
        "profiling_image.png": "bd7a70a5408df717a5d9c008eb09720f41f928667d15fc3885be7e217a5b90f9",
        "profiling_points.npy": "ee324fccf3063b193febc9fe173c03a7aa244d687202c46da044028d53ed78a6",
        "profiling_range.npy": "18434bb0dfa606e25eb37fe169d284d3dc2dc0cef900c5822816603c951dc3f1",
    },
    "sidescan": {
        "sidescan.npy": "8ab136f6f3a4531faee9d66605353562f61b5012816c93cedcc50c7cb41918f3",
        "sidescan_altitude.npy": "50ce14e341d6dc6539bf2ed3e2c9712636e2d3b34138e66b94b9bb0151cdbaef",
        "sidescan_ground.npy": "206e5b34ff2b4a5af4c90f978d10938ebed63665dda93e94deb1c573e520a007",
        "sidescan_ground_waterfall.png": "eb7e3505c08d5c4248aa429b6045bd184a28705dadb10ee4de40391489ed354c",
        "sidescan_ranges.npy": "5da001c918c39a48da22e1ebc0b089db39141cbd0a3b4b4d0b66a933f3f5a8d6",
        "sidescan_waterfall.png": "cfcc681e5f2829f67351bcccf52abe26ba31d12a396e4a823f3dfd7fcd4abd9b",
    },
    "singlebeam": {
        "singlebeam.npy": "b248a989168817949c5a33a4025d36ff780aafddf74ec7b73f1dd8a3c36c7cf7",
        "singlebeam_echogram.png": "de40b9da6e068a1371e41f5711b235edf5100c764bfe66b03ae56bda46738648",
        "singlebeam_first_return_range.npy": "01ae2fe0ed4cb3e750fdec79813384c7ec59e54fe42c898c17de335cf15492b2",
        "singlebeam_ranges.npy": "929250288a639afe00c2c7b88cddb543586167f5b7eaee9c5c2aa12bcb906df4",
    },
    "sonar": {
        "sonar.npy": "8ed087ba8be12ff58d99c9a574c092882c681be5898c9cc2af6eabaabf05daad",
        "sonar_bearings.npy": "b056abc8f7ae7145dfca30f170168735178c5a64f3c197452cd08ebaeab6c2f4",
        "sonar_fan.png": "2da1a768c19f12c8a8c8d46bc88e84b4aa27910c81d936b1168979b9662d2911",
        "sonar_polar.png": "d3d392295b902c81957d22edaa2dc20476c557ab32a64f9ed982800d70263f31",
        "sonar_ranges.npy": "ea80759a393207001473a1170dafe1953b6166debe2910c43fd3779d6fb7b823",
    },
}


def sha256_files(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != "manifest.json"}


def canonical_manifest(folder: Path) -> str:
    """The manifest without ``timing``, ``versions``, shard ``render_seconds`` and file paths, as sorted JSON."""
    m = json.loads((folder / "manifest.json").read_text())
    for key in ("timing", "versions"):
        m.pop(key, None)
    m["rig"].pop("source", None)
    m["scene"].pop("source", None)
    m["shards"] = [{k: v for k, v in s.items() if not k.endswith("_seconds")} for s in m["shards"]]
    return json.dumps(m, sort_keys=True)


@pytest.fixture(scope="module")
def golden_dataset(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("golden")
    rig = folder / "rig.yaml"
    rig.write_text(yaml.safe_dump(RIG))
    out = folder / "ds"
    assert main(["generate", "--rig", str(rig), "--out", str(out), "--no-progress", "--device", "cpu"]) == 0
    return out


def test_generate_writes_the_recorded_bytes(golden_dataset: Path) -> None:
    assert sha256_files(golden_dataset) == GENERATE_HASHES


def test_generate_writes_the_recorded_manifest(golden_dataset: Path) -> None:
    assert hashlib.sha256(canonical_manifest(golden_dataset).encode()).hexdigest() == MANIFEST_HASH


@pytest.mark.parametrize("target", sorted(RENDERS))
def test_render_writes_the_recorded_bytes(tmp_path: Path, target: str) -> None:
    out = tmp_path / target
    assert main(["render", target, "--scene", "tank", "--device", "cpu", "--out", str(out), *RENDERS[target]]) == 0
    assert sha256_files(out) == RENDER_HASHES[target]
