"""The CDR paper's published figures (Lee, Song and Kim, 2025: "Finding Diamonds in Conversation Haystacks"),
as the summary's `reference`, labelled as other models: Table 3 (nDCG/R/P@10 per setting, times), Tables 9-11
(every metric per setting) and Table 12 (per task category), plus Table 2's dataset statistics (beside ours in
the bench's "Data" table). A reference holds the published rows only: this run's figures are the summary's
metrics and its `category` breakdown, under ragjudge's names (`hit@10` is the paper's ACC@10).

Transcribed from the paper's text, where rows of two models are sometimes merged into one line (their values
interleaved); every row was checked against ACC@1 = P@1 = nDCG@1 = MRR@1 and against Table 3 (a test
re-checks both). What the text gets wrong or leaves open is listed in `NOTES`, never silently fixed.
"""

from __future__ import annotations

from ragjudge.bench.cdr.data import CATEGORIES
from ragjudge.bench.cdr.units import UnitSpec
from ragjudge.engine.summary import Reference

COMMERCIAL = ("Voyage-3-large", "Text-embedding-3-large", "Text-embedding-3-small", "Embed-english-v3.0")
SETTINGS = {"turn": "Table 9 (turn-based)", "window": "Table 10 (sliding chunk, k=3)",
            "session": "Table 11 (session-based)"}
TABLE_2 = {"conversations": 9146, "queries": 1583, "messages_per_conversation": 5.4,
           "tokens_per_conversation": 464, "relevant_per_query": 20.44, "pairs": 32357,
           "category_share": {"Intent & Purpose": 0.361, "Emotion & Feedback": 0.201,
                              "Linguistic Style & Expression": 0.159, "Trust, Safety & Ethics": 0.146,
                              "Conversation Dynamics": 0.134}}
"""Table 2. Tokens are GPT-4o tokens; the paper does not say whether the 32,357 pairs count duplicates."""

NOTES = (
    ("The paper's models ran on an NVIDIA H100 with batch size 4 (ingestion: embedding the 9,146 conversations; "
     "inference: 1,583 queries end to end, Table 3, setting not stated); times here are this machine's."),
    ("Table 3 swaps the sliding-chunk nDCG@10 and R@10 of Text-embedding-3-small (0.4855, 0.2558) and "
     "Stella_en_1.5B_v5 (0.4894, 0.2528) relative to Table 10 (0.4894/0.2528 and 0.4855/0.2558); Table 10's "
     "values are printed."),
    ("Table 9 gives NV-Embed-v2 (turn) ACC@1 = P@1 = nDCG@1 = MRR@1 = 0.0013 but ACC@5 = 0.7410: printed as "
     "published, implausible."),
    ("Table 12 does not name its setting; its query-weighted means (Table 2 shares) match the session setting's "
     "nDCG@10 and P@10 (mean gap -0.003 and +0.001) but run 0.011 under its R@10; Cde-small-v2 has "
     "three-decimal values (0.086, 0.048) as printed."),
    ("Section 4.3 says no model passes 0.17 nDCG@10 on Conversation Dynamics; Table 12 gives "
     "Modernbert-embed-base 0.1848."),
    ("The paper's 'turn' is read as a message (Table 2 counts 5.4 messages per conversation); its sliding "
     "chunks as 3 consecutive messages. It does not say whether a conversation retrieved through several "
     "turns counts once; ragjudge ranks each conversation once, by its best unit (max-passage)."),
)

TABLE_3 = """\
model	turn NDCG@10	turn R@10	turn P@10	window NDCG@10	window R@10	window P@10	session NDCG@10	session R@10	session P@10	inference_s	ingestion_s
Voyage-3-large	0.5079	0.2609	0.4359	0.5063	0.2582	0.4327	0.5036	0.2615	0.4358	375.03	2620.00
Text-embedding-3-large	0.5078	0.2698	0.4389	0.5130	0.2696	0.4416	0.4876	0.2529	0.4190	245.90	1433.12
Text-embedding-3-small	0.4897	0.2558	0.4183	0.4855	0.2558	0.4171	0.4664	0.2412	0.3972	196.99	1253.68
Embed-english-v3.0	0.4189	0.2237	0.3547	0.2547	0.1351	0.2116	0.3620	0.1923	0.2987	83.75	520.00
Stella_en_1.5B_v5	0.4907	0.2592	0.4141	0.4894	0.2528	0.4078	0.4722	0.2481	0.3961	7.84	336.92
Stella_en_400M_v5	0.4682	0.2490	0.3963	0.4651	0.2462	0.3919	0.4583	0.2400	0.3846	5.51	119.24
Jasper_en_vision_language_v1	0.4379	0.2317	0.3712	0.4309	0.2245	0.3615	0.4561	0.2382	0.3814	7.86	355.56
NV-Embed-v2	0.3170	0.2008	0.3251	0.3956	0.1988	0.3262	0.4592	0.2344	0.3855	13.92	279.73
NV-Embed-v1	0.2467	0.1226	0.1956	0.2603	0.1302	0.2080	0.4389	0.2242	0.3634	13.79	280.23
SFR-Embedding-2_R	0.3344	0.1775	0.2805	0.3127	0.1639	0.2589	0.4474	0.2280	0.3722	10.40	213.57
Jina-embeddings-v3	0.3803	0.2053	0.3160	0.3983	0.2142	0.3363	0.3718	0.1995	0.3088	7.01	106.25
Modernbert-embed-base	0.3594	0.1923	0.3026	0.3398	0.1795	0.2857	0.3579	0.1906	0.3016	7.49	45.63
Gte-Qwen2-1.5B-instruct	0.4646	0.2412	0.3952	0.4386	0.2261	0.3708	0.3615	0.1919	0.2987	7.59	336.73
Gte-large-en-v1.5	0.3310	0.1821	0.2792	0.3246	0.1778	0.2726	0.3429	0.1840	0.2860	4.39	133.29
Bge-large-en-v1.5	0.3276	0.1757	0.2719	0.3105	0.1659	0.2539	0.3071	0.1617	0.2476	3.97	94.29
Cde-small-v2	0.1163	0.0606	0.0975	0.1226	0.0640	0.1007	0.0830	0.0463	0.0701	7.50	39.57
"""

TABLE_9 = """\
model	ACC@1	ACC@5	ACC@10	ACC@20	P@1	P@5	P@10	P@20	R@1	R@5	R@10	R@20	NDCG@1	NDCG@5	NDCG@10	NDCG@20	MRR@1	MRR@5	MRR@10	MRR@20
Voyage-3-large	0.6816	0.8440	0.8876	0.9210	0.6816	0.5495	0.4359	0.3139	0.0433	0.1727	0.2609	0.3549	0.6816	0.5828	0.5079	0.4530	0.6816	0.7470	0.7530	0.7553
Text-embedding-3-large	0.6684	0.8446	0.9033	0.9394	0.6684	0.5453	0.4389	0.3137	0.0444	0.1758	0.2698	0.3638	0.6684	0.5763	0.5078	0.4552	0.6684	0.7384	0.7463	0.7488
Text-embedding-3-small	0.6601	0.8547	0.9059	0.9394	0.6601	0.5325	0.4183	0.3031	0.0433	0.1708	0.2558	0.3508	0.6601	0.5652	0.4897	0.4415	0.6601	0.7383	0.7451	0.7475
Embed-english-v3.0	0.5799	0.7991	0.8642	0.9135	0.5799	0.4550	0.3547	0.2506	0.0382	0.1503	0.2237	0.3015	0.5799	0.4847	0.4189	0.3760	0.5799	0.6662	0.6750	0.6783
Stella_en_1.5B_v5	0.6759	0.8421	0.8926	0.9324	0.6759	0.5320	0.4141	0.2900	0.0453	0.1776	0.2592	0.3443	0.6759	0.5688	0.4907	0.4365	0.6759	0.7424	0.7495	0.7523
Stella_en_400M_v5	0.6450	0.8313	0.8863	0.9191	0.6450	0.5051	0.3963	0.2794	0.0424	0.1675	0.2490	0.3338	0.6450	0.5402	0.4682	0.4187	0.6450	0.7170	0.7245	0.7269
Jasper_en_vision_language_v1	0.6045	0.7922	0.8515	0.8989	0.6045	0.4710	0.3712	0.2643	0.0406	0.1557	0.2317	0.3117	0.6045	0.5042	0.4379	0.3927	0.6045	0.6749	0.6826	0.6860
NV-Embed-v2	0.0013	0.7410	0.8105	0.8617	0.0013	0.3805	0.3251	0.2310	0.0000	0.1230	0.2008	0.2707	0.0013	0.3258	0.3170	0.2929	0.0013	0.3398	0.3492	0.3528
NV-Embed-v1	0.4062	0.6008	0.6721	0.7473	0.4062	0.2678	0.1956	0.1338	0.0279	0.0871	0.1226	0.1618	0.4062	0.2999	0.2467	0.2165	0.4062	0.4791	0.4888	0.4941
SFR-Embedding-2_R	0.4864	0.7012	0.7732	0.8326	0.4864	0.3588	0.2805	0.1980	0.0326	0.1189	0.1775	0.2393	0.4864	0.3881	0.3344	0.3003	0.4864	0.5684	0.5778	0.5821
Jina-embeddings-v3	0.5502	0.7656	0.8200	0.8585	0.5502	0.4129	0.3160	0.2271	0.0381	0.1408	0.2053	0.2792	0.5502	0.4449	0.3803	0.3457	0.5502	0.6316	0.6389	0.6416
Modernbert-embed-base	0.5066	0.7505	0.8313	0.8844	0.5066	0.3821	0.3026	0.2185	0.0353	0.1269	0.1923	0.2650	0.5066	0.4125	0.3594	0.3269	0.5066	0.5988	0.6098	0.6136
Gte-Qwen2-1.5B-instruct	0.6387	0.8225	0.8749	0.9128	0.6387	0.5054	0.3952	0.2798	0.0419	0.1607	0.2412	0.3233	0.6387	0.5380	0.4646	0.4127	0.6387	0.7102	0.7171	0.7199
Gte-large-en-v1.5	0.4668	0.6961	0.7732	0.8244	0.4668	0.3522	0.2792	0.2007	0.0319	0.1186	0.1821	0.2506	0.4668	0.3788	0.3310	0.3025	0.4668	0.5517	0.5620	0.5655
Bge-large-en-v1.5	0.4738	0.7202	0.7833	0.8345	0.4738	0.3554	0.2719	0.1932	0.0328	0.1208	0.1757	0.2383	0.4738	0.3836	0.3276	0.2963	0.4738	0.5663	0.5749	0.5786
Cde-small-v2	0.1718	0.3424	0.4195	0.5205	0.1718	0.1265	0.0975	0.0758	0.0114	0.0403	0.0606	0.0911	0.1718	0.1370	0.1163	0.1106	0.1718	0.2328	0.2430	0.2501
"""

TABLE_10 = """\
model	ACC@1	ACC@5	ACC@10	ACC@20	P@1	P@5	P@10	P@20	R@1	R@5	R@10	R@20	NDCG@1	NDCG@5	NDCG@10	NDCG@20	MRR@1	MRR@5	MRR@10	MRR@20
Voyage-3-large	0.6860	0.8440	0.8857	0.9286	0.6860	0.5497	0.4327	0.3167	0.0445	0.1739	0.2582	0.3579	0.6860	0.5844	0.5063	0.4557	0.6860	0.7478	0.7535	0.7565
Text-embedding-3-large	0.6810	0.8440	0.8977	0.9400	0.6810	0.5568	0.4416	0.3170	0.0442	0.1785	0.2696	0.3666	0.6810	0.5881	0.5130	0.4599	0.6810	0.7439	0.7514	0.7544
Text-embedding-3-small	0.6747	0.8408	0.8920	0.9343	0.6747	0.5289	0.4171	0.2990	0.0440	0.1669	0.2528	0.3462	0.6747	0.5644	0.4894	0.4381	0.6747	0.7401	0.7471	0.7501
Embed-english-v3.0	0.3721	0.6090	0.6772	0.7612	0.3721	0.2786	0.2116	0.1492	0.0255	0.0909	0.1351	0.1824	0.3721	0.2998	0.2547	0.2290	0.3721	0.4603	0.4696	0.4755
Stella_en_1.5B_v5	0.6740	0.8446	0.8920	0.9324	0.6740	0.5301	0.4078	0.2872	0.0442	0.1739	0.2558	0.3396	0.6740	0.5663	0.4855	0.4320	0.6740	0.7405	0.7469	0.7497
Stella_en_400M_v5	0.6450	0.8219	0.8730	0.9135	0.6450	0.5039	0.3919	0.2732	0.0425	0.1671	0.2462	0.3268	0.6450	0.5393	0.4651	0.4127	0.6450	0.7143	0.7214	0.7242
Jasper_en_vision_language_v1	0.6172	0.7802	0.8326	0.8768	0.6172	0.4667	0.3615	0.2498	0.0406	0.1513	0.2245	0.2951	0.6172	0.5024	0.4309	0.3793	0.6172	0.6779	0.6851	0.6883
NV-Embed-v2	0.5970	0.7410	0.7890	0.8345	0.5970	0.4335	0.3262	0.2237	0.0391	0.1378	0.1988	0.2610	0.5970	0.4709	0.3956	0.3452	0.5970	0.6530	0.6596	0.6629
NV-Embed-v1	0.4195	0.5989	0.6557	0.7233	0.4195	0.2870	0.2080	0.1392	0.0282	0.0926	0.1302	0.1702	0.4195	0.3178	0.2603	0.2262	0.4195	0.4903	0.4980	0.5027
SFR-Embedding-2_R	0.4630	0.6526	0.7075	0.7625	0.4630	0.3395	0.2589	0.1790	0.0315	0.1121	0.1639	0.2186	0.4630	0.3680	0.3127	0.2778	0.4630	0.5370	0.5445	0.5480
Jina-embeddings-v3	0.5483	0.7612	0.8212	0.8737	0.5483	0.4312	0.3363	0.2423	0.0382	0.1443	0.2142	0.2919	0.5483	0.4607	0.3983	0.3618	0.5483	0.6322	0.6403	0.6439
Modernbert-embed-base	0.4839	0.7176	0.7928	0.8471	0.4839	0.3645	0.2857	0.2062	0.0330	0.1206	0.1795	0.2501	0.4839	0.3927	0.3398	0.3090	0.4839	0.5706	0.5806	0.5845
Gte-Qwen2-1.5B-instruct	0.6159	0.7751	0.8395	0.8863	0.6159	0.4738	0.3708	0.2602	0.0397	0.1513	0.2261	0.3042	0.6159	0.5087	0.4386	0.3882	0.6159	0.6792	0.6876	0.6908
Gte-large-en-v1.5	0.4548	0.6721	0.7505	0.8193	0.4548	0.3479	0.2726	0.1923	0.0313	0.1186	0.1778	0.2408	0.4548	0.3741	0.3246	0.2936	0.4548	0.5379	0.5485	0.5534
Bge-large-en-v1.5	0.4618	0.6810	0.7612	0.8143	0.4618	0.3332	0.2539	0.1772	0.0330	0.1138	0.1659	0.2204	0.4618	0.3643	0.3105	0.2780	0.4618	0.5419	0.5528	0.5564
Cde-small-v2	0.1876	0.3392	0.4188	0.5155	0.1876	0.1318	0.1007	0.0764	0.0129	0.0442	0.0640	0.0923	0.1876	0.1450	0.1226	0.1148	0.1876	0.2425	0.2531	0.2600
"""

TABLE_11 = """\
model	ACC@1	ACC@5	ACC@10	ACC@20	P@1	P@5	P@10	P@20	R@1	R@5	R@10	R@20	NDCG@1	NDCG@5	NDCG@10	NDCG@20	MRR@1	MRR@5	MRR@10	MRR@20
Voyage-3-large	0.6639	0.8294	0.8844	0.9198	0.6639	0.5381	0.4358	0.3158	0.0436	0.1686	0.2615	0.3564	0.6639	0.5700	0.5036	0.4521	0.6639	0.7317	0.7392	0.7417
Text-embedding-3-large	0.6513	0.8174	0.8838	0.9280	0.6513	0.5291	0.4190	0.2977	0.0410	0.1661	0.2529	0.3435	0.6513	0.5604	0.4876	0.4340	0.6513	0.7160	0.7249	0.7281
Text-embedding-3-small	0.6431	0.8174	0.8787	0.9179	0.6431	0.5041	0.3972	0.2829	0.0414	0.1608	0.2412	0.3266	0.6431	0.5385	0.4664	0.4161	0.6431	0.7118	0.7199	0.7227
Embed-english-v3.0	0.5224	0.7309	0.7953	0.8528	0.5224	0.3960	0.2987	0.2070	0.0356	0.1352	0.1923	0.2530	0.5224	0.4271	0.3620	0.3223	0.5224	0.6027	0.6115	0.6156
Stella_en_1.5B_v5	0.6627	0.8269	0.8762	0.9154	0.6627	0.5119	0.3961	0.2740	0.0440	0.1682	0.2481	0.3259	0.6627	0.5493	0.4722	0.4162	0.6627	0.7258	0.7322	0.7349
Stella_en_400M_v5	0.6374	0.8130	0.8636	0.9046	0.6374	0.5003	0.3846	0.2684	0.0426	0.1650	0.2400	0.3188	0.6374	0.5352	0.4583	0.4062	0.6374	0.7054	0.7121	0.7150
Jasper_en_vision_language_v1	0.6406	0.7997	0.8547	0.9015	0.6406	0.4968	0.3814	0.2635	0.0430	0.1626	0.2382	0.3131	0.6406	0.5334	0.4561	0.4017	0.6406	0.7039	0.7116	0.7147
NV-Embed-v2	0.6500	0.8042	0.8490	0.8913	0.6500	0.5040	0.3855	0.2638	0.0420	0.1606	0.2344	0.3071	0.6500	0.5395	0.4592	0.4002	0.6500	0.7098	0.7159	0.7187
NV-Embed-v1	0.6380	0.8105	0.8591	0.9015	0.6380	0.4787	0.3634	0.2464	0.0418	0.1547	0.2242	0.2894	0.6380	0.5184	0.4389	0.3804	0.6380	0.7034	0.7101	0.7131
SFR-Embedding-2_R	0.6393	0.7890	0.8250	0.8642	0.6393	0.4931	0.3722	0.2534	0.0416	0.1584	0.2280	0.2970	0.6393	0.5293	0.4474	0.3889	0.6393	0.6973	0.7022	0.7049
Jina-embeddings-v3	0.5287	0.7366	0.7997	0.8503	0.5287	0.4030	0.3088	0.2182	0.0361	0.1369	0.1995	0.2665	0.5287	0.4345	0.3718	0.3347	0.5287	0.6079	0.6165	0.6200
Modernbert-embed-base	0.5060	0.7239	0.7922	0.8484	0.5060	0.3827	0.3016	0.2129	0.0353	0.1258	0.1906	0.2578	0.5060	0.4121	0.3579	0.3217	0.5060	0.5900	0.5993	0.6033
Gte-Qwen2-1.5B-instruct	0.5268	0.7404	0.8099	0.8598	0.5268	0.3895	0.2987	0.2113	0.0379	0.1295	0.1919	0.2585	0.5268	0.4226	0.3615	0.3250	0.5268	0.6099	0.6192	0.6227
Gte-large-en-v1.5	0.4877	0.6949	0.7694	0.8244	0.4877	0.3665	0.2860	0.1997	0.0334	0.1232	0.1840	0.2435	0.4877	0.3972	0.3429	0.3064	0.4877	0.5688	0.5789	0.5828
Bge-large-en-v1.5	0.4769	0.6961	0.7618	0.8256	0.4769	0.3349	0.2476	0.1732	0.0333	0.1148	0.1617	0.2164	0.4769	0.3674	0.3071	0.2755	0.4769	0.5590	0.5678	0.5722
Cde-small-v2	0.1175	0.2527	0.3392	0.4251	0.1175	0.0853	0.0701	0.0521	0.0091	0.0292	0.0463	0.0683	0.1175	0.0932	0.0830	0.0792	0.1175	0.1660	0.1776	0.1836
"""

TABLE_12 = """\
model	Conversation Dynamics NDCG@10	Conversation Dynamics R@10	Conversation Dynamics P@10	Emotion & Feedback NDCG@10	Emotion & Feedback R@10	Emotion & Feedback P@10	Intent & Purpose NDCG@10	Intent & Purpose R@10	Intent & Purpose P@10	Linguistic Style & Expression NDCG@10	Linguistic Style & Expression R@10	Linguistic Style & Expression P@10	Trust, Safety & Ethics NDCG@10	Trust, Safety & Ethics R@10	Trust, Safety & Ethics P@10
Voyage-3-large	0.0930	0.0466	0.0825	0.6394	0.3972	0.5289	0.6211	0.2956	0.5604	0.3373	0.1109	0.2806	0.5628	0.2689	0.4974
Text-embedding-3-large	0.1124	0.0576	0.1014	0.6368	0.3849	0.5214	0.5919	0.2829	0.5237	0.2896	0.0934	0.2456	0.5631	0.2617	0.4991
Text-embedding-3-small	0.1386	0.0663	0.1199	0.5977	0.3637	0.4865	0.5644	0.2672	0.5010	0.2655	0.0836	0.2151	0.5461	0.2580	0.4788
Embed-english-v3.0	0.1339	0.0651	0.1133	0.5649	0.3434	0.4535	0.3883	0.1851	0.3349	0.1966	0.0644	0.1504	0.3926	0.1837	0.3355
Stella_en_1.5B_v5	0.1409	0.0682	0.1161	0.6586	0.4019	0.5390	0.5341	0.2568	0.4679	0.2972	0.0979	0.2369	0.5366	0.2516	0.4597
Stella_en_400M_v5	0.1390	0.0682	0.1171	0.6519	0.3943	0.5314	0.5162	0.2463	0.4527	0.2599	0.0848	0.2032	0.5406	0.2552	0.4662
Jasper_en_vision_language_v1	0.1134	0.0550	0.0991	0.6645	0.4061	0.5462	0.5099	0.2428	0.4443	0.2841	0.0931	0.2226	0.5174	0.2354	0.4355
NV-Embed-v2	0.0846	0.0374	0.0659	0.6797	0.4185	0.5660	0.4955	0.2239	0.4293	0.3242	0.1066	0.2655	0.5341	0.2439	0.4571
NV-Embed-v1	0.1280	0.0533	0.1047	0.6355	0.3830	0.5198	0.4966	0.2314	0.4297	0.3001	0.1004	0.2448	0.4446	0.1988	0.3619
SFR-Embedding-2_R	0.0752	0.0318	0.0597	0.6383	0.3881	0.5151	0.5100	0.2391	0.4450	0.3521	0.1097	0.2849	0.4686	0.2226	0.3918
Jina-embeddings-v3	0.1416	0.0712	0.1209	0.5942	0.3641	0.4843	0.3852	0.1866	0.3349	0.2062	0.0701	0.1615	0.4166	0.1932	0.3524
Modernbert-embed-base	0.1848	0.0854	0.1512	0.5479	0.3339	0.4403	0.3950	0.1907	0.3571	0.1702	0.0576	0.1341	0.3700	0.1736	0.3182
Gte-Qwen2-1.5B-instruct	0.1270	0.0550	0.1081	0.5190	0.3206	0.4208	0.3774	0.1799	0.3251	0.2451	0.0837	0.1984	0.3248	0.1576	0.2740
Gte-large-en-v1.5	0.0715	0.0329	0.0602	0.5806	0.3606	0.4711	0.3407	0.1619	0.3016	0.2183	0.0748	0.1770	0.3861	0.1813	0.3208
Bge-large-en-v1.5	0.1486	0.0693	0.1242	0.5033	0.3058	0.4006	0.3044	0.1441	0.2576	0.1959	0.0608	0.1488	0.2996	0.1363	0.2433
Cde-small-v2	0.0703	0.0347	0.0626	0.1333	0.0847	0.1066	0.086	0.0422	0.0778	0.048	0.0148	0.0389	0.0576	0.0267	0.0485
"""


def _parse(block: str) -> tuple[list[str], dict[str, list[float]]]:
    lines = block.strip().splitlines()
    header = lines[0].split("\t")[1:]
    rows = {}
    for line in lines[1:]:
        model, *values = line.split("\t")
        rows[model] = [float(v) for v in values]
    return header, rows


def table(name: str) -> tuple[list[str], dict[str, list[float]]]:
    """(columns, model -> values) of `TABLE_3`, `TABLE_9`... as published."""
    return _parse(globals()[name])


def setting_of(spec: UnitSpec) -> str | None:
    """The paper's setting a unit reproduces: session, window (k=3, stride 1), turn (a message), or None."""
    if spec.kind == "session":
        return "session"
    if spec.kind == "window" and (spec.size, spec.stride) == (3, 1):
        return "window"
    if spec.kind == "message":
        return "turn"
    return None


def _named(model: str) -> str:
    """The model's name, marked when it is a commercial API (the paper's grouping) without a column of its own, so
    that a setting's table fits 80 columns."""
    return f"{model} (API)" if model in COMMERCIAL else model


SOURCE = "Finding Diamonds in Conversation Haystacks (Lee, Song and Kim, 2025)"
OFFICIAL = "the official test set (9,146 conversations, 1,583 queries with a relevant conversation)"
TIMES_NOT_COMPARABLE = ("ingestion and inference times are the paper's (NVIDIA H100, batch size 4), never "
                        "comparable with this machine's")
SHOWN = ("ACC@1", "ACC@10", "P@10", "R@10", "NDCG@10")
"""The published columns a setting's reference shows (the terminal is 80 columns wide); `full_tables` has all."""
UNIT_OF_SETTING = {"turn": "-T unit=message", "window": "-T unit=window:3:1", "session": "-T unit=session"}
TABLE_OF_SETTING = {"turn": "TABLE_9", "window": "TABLE_10", "session": "TABLE_11"}


def setting_table(setting: str) -> Reference:
    """Tables 9-11 (the cut-off 10 and ACC@1 of one setting) as published: 16 models."""
    columns, rows = table(TABLE_OF_SETTING[setting])
    idx = [columns.index(c) for c in SHOWN]
    return Reference(
        title=f"CDR paper, {SETTINGS[setting]}: 16 embedding models (not this run)",
        columns=["model", *SHOWN],
        rows=[[_named(model), *(values[i] for i in idx)] for model, values in rows.items()],
        notes=["(API): a commercial API, the others open-source models; ACC@k is our hit@k, NDCG@k our nDCG@k; every "
               "cut-off (1, 5, 10, 20), MRR and Table 3's ingestion and inference times are in summary.json's "
               f"details.paper; {TIMES_NOT_COMPARABLE}"],
        source=f"{SOURCE}, {SETTINGS[setting].split(' (')[0]}", unit="fraction",
        comparable=f"a run on {OFFICIAL} with {UNIT_OF_SETTING[setting]} (the models differ)")


def overview_table() -> Reference:
    """Table 3 as published (nDCG/R/P@10 for the three settings, times): for units no setting reproduces."""
    columns, rows = table("TABLE_3")
    return Reference(
        title="CDR paper, Table 3: 16 embedding models (not this run)", columns=["model", *columns],
        rows=[[_named(m), *v] for m, v in rows.items()],
        notes=["no paper setting uses this run's unit (-T unit=message, window:3:1 or session do); "
               + TIMES_NOT_COMPARABLE],
        source=f"{SOURCE}, Table 3", unit="fraction", comparable="")


SHORT_CATEGORY = {"Intent & Purpose": "intent", "Emotion & Feedback": "emotion",
                  "Conversation Dynamics": "dynamics", "Trust, Safety & Ethics": "trust",
                  "Linguistic Style & Expression": "style"}
"""Table 12's category names as column headers short enough for one 80-column table."""


def category_table() -> Reference:
    """Table 12's nDCG@10 per task category as published (R@10 and P@10 are in `full_tables`)."""
    columns, rows = table("TABLE_12")
    idx = [columns.index(f"{c} NDCG@10") for c in CATEGORIES]
    return Reference(
        title="CDR paper, Table 12 (setting not stated): nDCG@10 per task category, 16 embedding models "
              "(not this run)",
        columns=["model", *(SHORT_CATEGORY[c] for c in CATEGORIES)],
        rows=[[_named(m), *(v[i] for i in idx)] for m, v in rows.items()],
        notes=["columns: " + ", ".join(f"{SHORT_CATEGORY[c]}: {c}" for c in CATEGORIES) + "; ours: the 'category' "
               "breakdown; R@10 and P@10 per category are in summary.json's details.paper"],
        source=f"{SOURCE}, Table 12", unit="fraction",
        comparable=(f"a run on {OFFICIAL} with the paper's task categories and -T unit=session, if Table 12 is "
                    "the session setting (the paper does not say; see the notes)"))


def full_tables(setting: str | None, categories: bool) -> dict[str, dict[str, object]]:
    """Every published column of the tables a run is shown beside (for scripts: summary.json's details)."""
    out: dict[str, dict[str, object]] = {}
    names = ([TABLE_OF_SETTING[setting]] if setting else []) + ["TABLE_3"] + (["TABLE_12"] if categories else [])
    for name in names:
        columns, rows = table(name)
        out[name.replace("TABLE_", "Table ")] = {"columns": ["model", *columns],
                                                  "rows": [[m, *v] for m, v in rows.items()]}
    return out
